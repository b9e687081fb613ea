/*
 * log_level.h - the levels of the daemon's log, as the configuration
 * names them (log_flags, -D, -v: config/conf.c) and the log (sm/log.h)
 * filters by them.
 */
#ifndef IBSM_CONFIG_LOG_LEVEL_H
#define IBSM_CONFIG_LOG_LEVEL_H

enum log_level { LOG_LVL_ERR = 0, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

#endif /* IBSM_CONFIG_LOG_LEVEL_H */
