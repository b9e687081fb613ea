/*
 * fuzz_sim.c - libFuzzer target: the datagram decoder of ibsim's client
 * protocol (sim_decode() in mad/sim_io.c), what the loop runs on every
 * datagram the simulator's socket hands it under --transport ibsim.
 *
 * Checked besides the sanitizers: only a datagram of exactly the
 * protocol's size is taken; the MAD handed on is 24-256 bytes and is the
 * datagram's MAD field, never more; the source LID and QP come from the
 * header in network order; encoding the MAD again gives the same bytes.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sim_io.h"
#include "mad/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t mad[MAD_SIZE], again[512];
	size_t len = 0;
	struct mad_addr from;
	int status = 0;
	/* the decoder may read exactly `size` bytes: give it a copy that
	 * ends there, so ASan sees any read beyond */
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	int rc = sim_decode(copy, size, mad, &len, &from, &status);
	if (size != sim_dgram_size()) {
		if (rc != -EPROTO)
			abort();
		free(copy);
		return 0;
	}
	if (rc != 0 || len < MAD_HDR_SIZE || len > MAD_SIZE)
		abort();
	/* header: dlid, slid, dqp, sqp, status, pad, length; MAD at 32 */
	if (memcmp(mad, copy + 32, len) != 0)
		abort();
	uint32_t slid, sqp;
	memcpy(&slid, copy + 4, 4);
	memcpy(&sqp, copy + 12, 4);
	if (from.lid != ntohs((uint16_t)slid) || from.qpn != ntohl(sqp))
		abort();
	long n = sim_encode(again, sizeof(again), mad, len, &from, 1);
	if (n != (long)sim_dgram_size() || memcmp(again + 32, mad, len) != 0)
		abort();
	free(copy);
	return 0;
}
