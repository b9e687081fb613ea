/*
 * check_pma.c - Performance Management MADs (mad/pma.c): the requests
 * carry what the spec places where, and the decoder refuses every answer
 * that is not exactly the one asked for.
 */
#include "config.h"

#include <check.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/pma.h"

/* A well-formed GetResp of `attr` for `port`. */
static void answer(struct pma_mad *m, uint16_t attr, uint8_t port)
{
	pma_build_get(m, attr, port);
	m->hdr.method = MAD_METHOD_GET | MAD_METHOD_RESP;
	m->hdr.tid = htobe64(0x1234);
	if (attr == PMA_ATTR_CLASS_PORT_INFO) {
		struct pma_class_port_info *c = (void *)m->data;
		c->base_version = 1;
		c->class_version = 1;
		c->cap_mask = htobe16(PMA_CAP_EXT_WIDTH | PMA_CAP_XMIT_WAIT);
		c->cap_mask2_resp_time = htobe32(0x12);
	}
}

START_TEST(test_build_get)
{
	struct pma_mad m;

	pma_build_get(&m, PMA_ATTR_PORT_COUNTERS, 7);
	ck_assert_uint_eq(m.hdr.base_version, 1);
	ck_assert_uint_eq(m.hdr.mgmt_class, 0x04);
	ck_assert_uint_eq(m.hdr.class_version, 1);
	ck_assert_uint_eq(m.hdr.method, MAD_METHOD_GET);
	ck_assert_uint_eq(be16toh(m.hdr.attr_id), 0x0012);
	ck_assert_uint_eq(((uint8_t *)&m)[65], 7);	/* PortSelect */
	ck_assert_uint_eq(m.hdr.attr_mod, 0);

	pma_build_get(&m, PMA_ATTR_PORT_COUNTERS_EXT, 3);
	ck_assert_uint_eq(be16toh(m.hdr.attr_id), 0x001d);
	ck_assert_uint_eq(((uint8_t *)&m)[65], 3);

	pma_build_get(&m, PMA_ATTR_CLASS_PORT_INFO, 3);
	ck_assert_uint_eq(be16toh(m.hdr.attr_id), 0x0001);
	for (int i = 0; i < PMA_DATA_SIZE; i++)
		ck_assert_uint_eq(m.data[i], 0);
}
END_TEST

START_TEST(test_build_clear)
{
	struct pma_mad m;
	const uint8_t *b = (const uint8_t *)&m;

	pma_build_clear(&m, PMA_ATTR_PORT_COUNTERS, 5, 0xffff, 1);
	ck_assert_uint_eq(m.hdr.method, MAD_METHOD_SET);
	ck_assert_uint_eq(b[65], 5);
	ck_assert_uint_eq(b[66], 0xff);		/* CounterSelect */
	ck_assert_uint_eq(b[67], 0xff);
	ck_assert_uint_eq(b[64 + 18], 1);	/* CounterSelect2 */
	for (int i = 64 + 4; i < 64 + 18; i++)	/* counters zero */
		ck_assert_uint_eq(b[i], 0);

	pma_build_clear(&m, PMA_ATTR_PORT_COUNTERS_EXT, 2, 0x00ff, 0);
	ck_assert_uint_eq(be16toh(m.hdr.attr_id), 0x001d);
	ck_assert_uint_eq(b[65], 2);
	ck_assert_uint_eq(b[66], 0x00);
	ck_assert_uint_eq(b[67], 0xff);
}
END_TEST

START_TEST(test_decode_counters)
{
	struct pma_mad m;
	struct pma_counters c;
	uint8_t *d;

	answer(&m, PMA_ATTR_PORT_COUNTERS, 9);
	d = m.data;
	d[4] = 0x12; d[5] = 0x34;		/* SymbolErrorCounter */
	d[6] = 0x56;				/* LinkErrorRecovery */
	d[7] = 0x78;				/* LinkDowned */
	d[8] = 0x01; d[9] = 0x02;		/* PortRcvErrors */
	d[14] = 0xff; d[15] = 0xff;		/* PortXmitDiscards */
	d[19] = 0xa5;				/* integrity 0xa, overrun 5 */
	d[22] = 0x00; d[23] = 0x07;		/* VL15Dropped */
	d[24] = 0xde; d[25] = 0xad; d[26] = 0xbe; d[27] = 0xef;
	d[40] = 0x00; d[41] = 0x00; d[42] = 0x01; d[43] = 0x00;
	ck_assert_int_eq(pma_decode_counters(&m, sizeof(m), 9, &c), 0);
	ck_assert_uint_eq(c.port, 9);
	ck_assert_uint_eq(c.symbol_err, 0x1234);
	ck_assert_uint_eq(c.link_recover, 0x56);
	ck_assert_uint_eq(c.link_downed, 0x78);
	ck_assert_uint_eq(c.rcv_err, 0x0102);
	ck_assert_uint_eq(c.xmit_discards, 0xffff);
	ck_assert_uint_eq(c.link_integrity, 0xa);
	ck_assert_uint_eq(c.buf_overrun, 5);
	ck_assert_uint_eq(c.vl15_dropped, 7);
	ck_assert_uint_eq(c.xmit_data, 0xdeadbeef);
	ck_assert_uint_eq(c.xmit_wait, 0x100);
}
END_TEST

START_TEST(test_decode_ext)
{
	struct pma_mad m;
	struct pma_counters_ext e;
	struct pma_port_counters_ext *p = (void *)m.data;

	answer(&m, PMA_ATTR_PORT_COUNTERS_EXT, 1);
	p->xmit_data = htobe64(0x8000000000000001ull);
	p->mc_rcv_pkts = htobe64(42);
	ck_assert_int_eq(pma_decode_counters_ext(&m, sizeof(m), 1, &e), 0);
	ck_assert_uint_eq(e.xmit_data, 0x8000000000000001ull);
	ck_assert_uint_eq(e.mc_rcv_pkts, 42);
	/* the PortCounters decoder refuses it: another attribute */
	struct pma_counters c;
	ck_assert_int_eq(pma_decode_counters(&m, sizeof(m), 1, &c), -EBADMSG);
}
END_TEST

START_TEST(test_decode_cpi)
{
	struct pma_mad m;
	struct pma_cpi cpi;
	struct pma_class_port_info *c = (void *)m.data;

	answer(&m, PMA_ATTR_CLASS_PORT_INFO, 0);
	ck_assert_int_eq(pma_decode_cpi(&m, sizeof(m), &cpi), 0);
	ck_assert(cpi.cap_mask & PMA_CAP_EXT_WIDTH);
	ck_assert_uint_eq(cpi.resp_time, 0x12);
	ck_assert(!cpi.redirected);

	/* A redirect: to LID 0x21, QP 0x123456, Q_Key, SL 3 */
	m.hdr.status = htobe16(MAD_STATUS_REDIRECT);
	c->redirect_lid = htobe16(0x21);
	c->redirect_qp = htobe32(0xff123456);	/* top byte reserved */
	c->redirect_qkey = htobe32(PMA_QKEY);
	c->redirect_tc_sl_fl = htobe32(3u << 20);
	c->redirect_pkey = htobe16(0xffff);
	ck_assert_int_eq(pma_decode_cpi(&m, sizeof(m), &cpi), 0);
	ck_assert(cpi.redirected);
	ck_assert_uint_eq(cpi.redirect_lid, 0x21);
	ck_assert_uint_eq(cpi.redirect_qp, 0x123456);
	ck_assert_uint_eq(cpi.redirect_qkey, PMA_QKEY);
	ck_assert_uint_eq(cpi.redirect_sl, 3);
	/* to a multicast LID or QP 0: out of range */
	c->redirect_lid = htobe16(0xc001);
	ck_assert_int_eq(pma_decode_cpi(&m, sizeof(m), &cpi), -ERANGE);
	c->redirect_lid = htobe16(0x21);
	c->redirect_qp = htobe32(0xff000000);
	ck_assert_int_eq(pma_decode_cpi(&m, sizeof(m), &cpi), -ERANGE);
	/* a class version the data disowns */
	m.hdr.status = 0;
	c->class_version = 2;
	ck_assert_int_eq(pma_decode_cpi(&m, sizeof(m), &cpi), -EBADMSG);
}
END_TEST

/* Every way an answer can be wrong is refused and writes nothing. */
START_TEST(test_decode_refuses)
{
	struct pma_mad good, m;
	struct pma_counters c;

	answer(&good, PMA_ATTR_PORT_COUNTERS, 4);
	good.data[5] = 9;
	ck_assert_int_eq(pma_decode_counters(&good, sizeof(good), 4, &c), 0);
	ck_assert_uint_eq(c.symbol_err, 9);

#define BAD(expr, rc) do {						\
		m = good;						\
		expr;							\
		memset(&c, 0xa5, sizeof(c));				\
		ck_assert_int_eq(pma_decode_counters(&m, sizeof(m), 4, &c), rc); \
		ck_assert_uint_eq(c.symbol_err, 0xa5a5);		\
	} while (0)
	BAD(m.hdr.base_version = 2, -EBADMSG);
	BAD(m.hdr.mgmt_class = MAD_CLASS_SA, -EBADMSG);
	BAD(m.hdr.class_version = 2, -EBADMSG);
	BAD(m.hdr.method = MAD_METHOD_GET, -EBADMSG);
	BAD(m.hdr.method = MAD_METHOD_SET | MAD_METHOD_RESP, -EBADMSG);
	BAD(m.hdr.method = MAD_METHOD_TRAP, -EBADMSG);
	BAD(m.hdr.attr_id = htobe16(PMA_ATTR_PORT_COUNTERS_EXT), -EBADMSG);
	BAD(m.hdr.attr_mod = htobe32(1), -EBADMSG);
	BAD(m.hdr.status = htobe16(MAD_STATUS_BUSY), -EAGAIN);
	BAD(m.hdr.status = htobe16(MAD_STATUS_INVALID_FIELD), -EPROTO);
	BAD(m.hdr.status = htobe16(MAD_STATUS_REDIRECT), -EPROTO);
	BAD(m.data[1] = 5, -ERANGE);		/* another port's counters */
	BAD(m.data[1] = 0xff, -ERANGE);		/* AllPortSelect sum */
#undef BAD
	/* wrong lengths */
	memset(&c, 0xa5, sizeof(c));
	ck_assert_int_eq(pma_decode_counters(&good, 0, 4, &c), -EBADMSG);
	ck_assert_int_eq(pma_decode_counters(&good, MAD_HDR_SIZE, 4, &c), -EBADMSG);
	ck_assert_int_eq(pma_decode_counters(&good, MAD_SIZE - 1, 4, &c), -EBADMSG);
	ck_assert_int_eq(pma_decode_counters(NULL, MAD_SIZE, 4, &c), -EBADMSG);
	ck_assert_uint_eq(c.symbol_err, 0xa5a5);
	struct pma_cpi cpi;
	ck_assert_int_eq(pma_decode_cpi(&good, 100, &cpi), -EBADMSG);
	struct pma_counters_ext e;
	ck_assert_int_eq(pma_decode_counters_ext(&good, 64 + 71, 4, &e), -EBADMSG);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pma");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, test_build_get);
	tcase_add_test(tc, test_build_clear);
	tcase_add_test(tc, test_decode_counters);
	tcase_add_test(tc, test_decode_ext);
	tcase_add_test(tc, test_decode_cpi);
	tcase_add_test(tc, test_decode_refuses);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
