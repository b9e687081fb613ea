/*
 * sm/worker.h - the shutdown of a worker that has MADs in flight (heavy,
 * light and quick sweeps, multicast forwarding).
 *
 * Its abort function is called twice around mad_engine_free(): the engine
 * cancels every request still out, and each cancelled request calls back
 * into its worker, so the first call only marks the worker (its callbacks
 * then do nothing) and the second, once the engine is gone, frees it.
 */
#ifndef IBSM_SM_WORKER_H
#define IBSM_SM_WORKER_H

#include <stdbool.h>

/*
 * One call of a worker's abort, `aborted` its mark: false on the first
 * call (now marked: the caller stops what else runs, such as a timer),
 * true on the second (the caller frees the worker).
 */
static inline bool worker_abort_step(bool *aborted)
{
	if (*aborted)
		return true;
	*aborted = true;
	return false;
}

#endif
