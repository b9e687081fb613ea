/*
 * check_sa_service.c - the state the SA keeps for its clients
 * (sm/sa/service.c): ServiceRecord ownership (15.2.5.14), identity-only
 * Deletes, per-port quotas and global caps, the lease cap, InformInfo
 * quotas, and the removal of subscriptions of ports that left the fabric
 * or stopped answering Reports; ServiceKeys shown to trusted requesters
 * only.
 *
 * Every request here is what a hostile host could send: the old code let
 * any host overwrite or mass-delete records and take every slot.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_wire.h"
#include "sm/sa/sa.h"
#include "sm/sa/service.h"

#define SR_ID		(1ull << 0)
#define SR_GID		(1ull << 1)
#define SR_PKEY		(1ull << 2)
#define SR_LEASE	(1ull << 4)
#define SR_NAME		(1ull << 6)
#define SR_RID		(SR_ID | SR_GID | SR_PKEY)

/* GID of "port" n: the default subnet prefix, port GUID 0x1000 + n. */
static void gid_of(unsigned n, uint8_t gid[16])
{
	uint64_t prefix = htobe64(0xfe80000000000000ull);
	uint64_t guid = htobe64(0x1000 + n);

	memcpy(gid, &prefix, 8);
	memcpy(gid + 8, &guid, 8);
}

struct req {
	uint8_t data[SA_DATA_SIZE];
	struct sa_query q;
	struct sa_table out;
};

static struct sa_service_record *req_init(struct req *r, uint8_t method,
					  uint64_t mask)
{
	memset(r, 0, sizeof(*r));
	r->q = (struct sa_query){ .method = method,
				  .attr_id = SA_ATTR_SERVICE_RECORD,
				  .comp_mask = mask, .tmpl = r->data,
				  .tmpl_len = sizeof(r->data) };
	r->out.rec_size = sizeof(struct sa_service_record);
	return (struct sa_service_record *)r->data;
}

/* A ServiceRecord Set of (id, owner port, name, lease) sent by port
 * `from` (0: a requester the model does not know).  Returns the status. */
static int svc_set(struct sa_state *st, unsigned from, uint64_t id,
		   unsigned owner, uint32_t lease, ev_tstamp now,
		   uint32_t *granted)
{
	struct req r;
	struct sa_service_record *t = req_init(&r, MAD_METHOD_SET,
					       SR_RID | SR_LEASE | SR_NAME);
	uint8_t rgid[16] = { 0 };
	int rc;

	t->service_id = htobe64(id);
	gid_of(owner, t->service_gid);
	t->service_pkey = htobe16(0xffff);
	t->service_lease = htobe32(lease);
	strcpy(t->service_name, "svc");
	if (from)
		gid_of(from, rgid);
	rc = sa_service_request(st, &r.q, rgid, now, &r.out);
	if (rc == 0 && granted) {
		ck_assert_uint_eq(r.out.count, 1);
		*granted = be32toh(((struct sa_service_record *)r.out.buf)->service_lease);
	}
	free(r.out.buf);
	return rc;
}

/* How many records a GetTable by ServiceID (0: all) returns. */
static size_t svc_count(struct sa_state *st, uint64_t id, ev_tstamp now)
{
	struct req r;
	struct sa_service_record *t = req_init(&r, MAD_METHOD_GET_TABLE,
					       id ? SR_ID : 0);
	uint8_t rgid[16] = { 0 };
	size_t n;

	t->service_id = htobe64(id);
	ck_assert_int_eq(sa_service_request(st, &r.q, rgid, now, &r.out), 0);
	n = r.out.count;
	free(r.out.buf);
	return n;
}

/* A Delete from port `from`; returns the status, *deleted the records. */
static int svc_delete(struct sa_state *st, unsigned from, uint64_t mask,
		      uint64_t id, unsigned owner, uint64_t sm_key,
		      size_t *deleted)
{
	struct req r;
	struct sa_service_record *t = req_init(&r, MAD_METHOD_DELETE, mask);
	uint8_t rgid[16] = { 0 };
	int rc;

	t->service_id = htobe64(id);
	gid_of(owner, t->service_gid);
	t->service_pkey = htobe16(0xffff);
	r.q.sm_key = sm_key;
	if (from)
		gid_of(from, rgid);
	rc = sa_service_request(st, &r.q, rgid, 0, &r.out);
	*deleted = r.out.count;
	free(r.out.buf);
	return rc;
}

START_TEST(test_set_needs_owner)
{
	struct sa_state *st = sa_state_new(NULL);
	struct req r;
	uint32_t lease;

	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(svc_set(st, 1, 0x10, 1, 60, 0, &lease), 0);
	ck_assert_uint_eq(lease, 60);
	/* Port 2 names port 1's GID: a takeover of port 1's record. */
	ck_assert_int_eq(svc_set(st, 2, 0x10, 1, 999, 0, NULL),
			 -SA_STATUS_REQ_INVALID);
	/* ... and a new record in port 1's name. */
	ck_assert_int_eq(svc_set(st, 2, 0x11, 1, 60, 0, NULL),
			 -SA_STATUS_REQ_INVALID);
	/* A requester the model does not know owns no port. */
	ck_assert_int_eq(svc_set(st, 0, 0x12, 1, 60, 0, NULL),
			 -SA_STATUS_REQ_INVALID);
	ck_assert_uint_eq(svc_count(st, 0, 0), 1);
	ck_assert_uint_eq(sa_state_stats(st)->svc_not_owner, 3);

	/* The record still has the owner's lease: it ran out at 60 s, not
	 * at 999 s. */
	ck_assert_uint_eq(svc_count(st, 0x10, 61), 0);

	/* A trusted requester (SM_Key, 15.2.2.1) may act for any port. */
	struct sa_service_record *t = req_init(&r, MAD_METHOD_SET, SR_RID);
	uint8_t rgid[16];
	t->service_id = htobe64(0x20);
	gid_of(7, t->service_gid);
	t->service_pkey = htobe16(0xffff);
	gid_of(2, rgid);
	r.q.sm_key = SA_SM_KEY_TRUSTED;
	ck_assert_int_eq(sa_service_request(st, &r.q, rgid, 0, &r.out), 0);
	free(r.out.buf);
	ck_assert_uint_eq(svc_count(st, 0x20, 0), 1);
	/* A wrong key is no key. */
	r.out = (struct sa_table){ .rec_size = sizeof(struct sa_service_record) };
	t->service_id = htobe64(0x21);
	r.q.sm_key = 0x1234;
	ck_assert_int_eq(sa_service_request(st, &r.q, rgid, 0, &r.out),
			 -SA_STATUS_REQ_INVALID);
	sa_state_free(st);
}
END_TEST

START_TEST(test_set_needs_identity)
{
	struct sa_state *st = sa_state_new(NULL);
	struct req r;
	uint8_t rgid[16];
	struct sa_service_record *t = req_init(&r, MAD_METHOD_SET, SR_ID | SR_GID);

	gid_of(1, rgid);
	t->service_id = htobe64(5);
	gid_of(1, t->service_gid);
	ck_assert_int_eq(sa_service_request(st, &r.q, rgid, 0, &r.out),
			 -SA_STATUS_INSUF_COMPONENTS);
	ck_assert_uint_eq(sa_state_services(st), 0);
	sa_state_free(st);
}
END_TEST

START_TEST(test_delete_rules)
{
	struct sa_state *st = sa_state_new(NULL);
	size_t n;

	for (unsigned p = 1; p <= 3; p++)
		for (uint64_t id = 1; id <= 4; id++)
			ck_assert_int_eq(svc_set(st, p, id, p, 600, 0, NULL), 0);
	ck_assert_uint_eq(sa_state_services(st), 12);

	/* ComponentMask 0 would match (and delete) every record: refused. */
	ck_assert_int_eq(svc_delete(st, 1, 0, 1, 1, 0, &n),
			 -SA_STATUS_INSUF_COMPONENTS);
	ck_assert_uint_eq(n, 0);
	/* ServiceID alone (what tests/fabric's client sent) is not enough. */
	ck_assert_int_eq(svc_delete(st, 1, SR_ID, 1, 1, 0, &n),
			 -SA_STATUS_INSUF_COMPONENTS);
	ck_assert_uint_eq(sa_state_services(st), 12);

	/* Port 2 deletes port 1's record: refused. */
	ck_assert_int_eq(svc_delete(st, 2, SR_RID, 1, 1, 0, &n),
			 -SA_STATUS_REQ_INVALID);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(sa_state_services(st), 12);

	/* The owner deletes exactly that record. */
	ck_assert_int_eq(svc_delete(st, 1, SR_RID, 1, 1, 0, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(sa_state_services(st), 11);
	ck_assert_uint_eq(svc_count(st, 1, 0), 2);	/* ports 2 and 3 keep ID 1 */
	/* Again: nothing left to delete (the agent answers NO_RECORDS). */
	ck_assert_int_eq(svc_delete(st, 1, SR_RID, 1, 1, 0, &n), 0);
	ck_assert_uint_eq(n, 0);

	/* A further component that does not match: nothing deleted. */
	ck_assert_int_eq(svc_delete(st, 1, SR_RID | SR_NAME, 2, 1, 0, &n), 0);
	ck_assert_uint_eq(n, 0);

	/* Trusted: any port's record, still one at a time. */
	ck_assert_int_eq(svc_delete(st, 1, SR_RID, 3, 3, SA_SM_KEY_TRUSTED, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(sa_state_services(st), 10);
	sa_state_free(st);
}
END_TEST

START_TEST(test_service_quota)
{
	struct sa_state *st = sa_state_new(NULL);

	for (uint64_t id = 0; id < SA_DEF_SERVICES_PER_PORT; id++)
		ck_assert_int_eq(svc_set(st, 1, id, 1, 600, 0, NULL), 0);
	ck_assert_int_eq(svc_set(st, 1, 999, 1, 600, 0, NULL),
			 -SA_STATUS_NO_RESOURCES);
	/* Refreshing a record it has is no new slot. */
	ck_assert_int_eq(svc_set(st, 1, 3, 1, 900, 0, NULL), 0);
	/* Another port is not locked out. */
	ck_assert_int_eq(svc_set(st, 2, 999, 2, 600, 0, NULL), 0);
	ck_assert_uint_eq(sa_state_stats(st)->svc_quota, 1);
	sa_state_free(st);

	/* The global cap holds too. */
	struct sa_state_limits lim = { .max_services = 10, .services_per_port = 4 };
	st = sa_state_new(&lim);
	for (unsigned p = 1; p <= 3; p++)
		for (uint64_t id = 0; id < 4; id++)
			ck_assert_int_eq(svc_set(st, p, id, p, 600, 0, NULL),
					 p == 3 && id >= 2 ? -SA_STATUS_NO_RESOURCES : 0);
	ck_assert_uint_eq(sa_state_services(st), 10);
	ck_assert_uint_eq(sa_state_stats(st)->svc_full, 2);
	sa_state_free(st);
}
END_TEST

/*
 * The SM_Key that makes a requester trusted is the well-known default:
 * a host using it may act for any port, but what it registers is charged
 * to its own port.  Before: one host registered records for made-up GIDs
 * (64 each) until the global table was full and every port was refused.
 */
START_TEST(test_trusted_quota)
{
	struct sa_state *st = sa_state_new(NULL);
	uint8_t rgid[16];
	int rc = 0;
	unsigned ok = 0;

	gid_of(2, rgid);
	for (unsigned g = 100; g < 100 + 200 && rc != -SA_STATUS_NO_RESOURCES;
	     g++) {
		struct req r;
		struct sa_service_record *t = req_init(&r, MAD_METHOD_SET, SR_RID);

		t->service_id = htobe64(g);
		gid_of(g, t->service_gid);
		t->service_pkey = htobe16(0xffff);
		r.q.sm_key = SA_SM_KEY_TRUSTED;
		rc = sa_service_request(st, &r.q, rgid, 0, &r.out);
		free(r.out.buf);
		ok += rc == 0;
	}
	ck_assert_int_eq(rc, -SA_STATUS_NO_RESOURCES);
	ck_assert_uint_eq(ok, SA_DEF_SERVICES_PER_PORT);
	ck_assert_uint_eq(sa_state_stats(st)->svc_quota, 1);
	/* The ports it named still have their own quota. */
	ck_assert_int_eq(svc_set(st, 100, 0x77, 100, 600, 0, NULL), 0);
	/* The trusting host's own records share that quota. */
	ck_assert_int_eq(svc_set(st, 2, 0x78, 2, 600, 0, NULL),
			 -SA_STATUS_NO_RESOURCES);
	/* A record it made for port 100 is still port 100's to delete. */
	size_t n;
	ck_assert_int_eq(svc_delete(st, 100, SR_RID, 100, 100, 0, &n), 0);
	ck_assert_uint_eq(n, 1);
	sa_state_free(st);
}
END_TEST

START_TEST(test_lease_cap)
{
	struct sa_state *st = sa_state_new(NULL);
	uint32_t lease;

	/* "Infinite" is cut to the maximum, and the answer says so. */
	ck_assert_int_eq(svc_set(st, 1, 1, 1, SA_LEASE_INFINITE, 0, &lease), 0);
	ck_assert_uint_eq(lease, SA_DEF_MAX_LEASE);
	ck_assert_int_eq(svc_set(st, 1, 2, 1, SA_DEF_MAX_LEASE + 1, 0, &lease), 0);
	ck_assert_uint_eq(lease, SA_DEF_MAX_LEASE);
	ck_assert_int_eq(svc_set(st, 1, 3, 1, 30, 0, &lease), 0);
	ck_assert_uint_eq(lease, 30);
	ck_assert_uint_eq(sa_state_stats(st)->svc_lease_cut, 2);
	ck_assert_uint_eq(svc_count(st, 0, SA_DEF_MAX_LEASE - 1), 2);
	ck_assert_uint_eq(svc_count(st, 0, SA_DEF_MAX_LEASE + 1), 0);
	sa_state_free(st);

	/* A configured maximum; SA_LEASE_INFINITE as maximum: no cap. */
	struct sa_state_limits lim = { .max_lease = 5 };
	st = sa_state_new(&lim);
	ck_assert_int_eq(svc_set(st, 1, 1, 1, 100, 0, &lease), 0);
	ck_assert_uint_eq(lease, 5);
	sa_state_free(st);
	lim.max_lease = SA_LEASE_INFINITE;
	st = sa_state_new(&lim);
	ck_assert_int_eq(svc_set(st, 1, 1, 1, SA_LEASE_INFINITE, 0, &lease), 0);
	ck_assert_uint_eq(lease, SA_LEASE_INFINITE);
	ck_assert_uint_eq(svc_count(st, 0, 1e9), 1);
	sa_state_free(st);
}
END_TEST

/* InformInfo Set from port `port` at LID `lid`, trap `trap`. */
static int subscribe(struct sa_state *st, unsigned port, uint16_t lid,
		     unsigned trap, uint8_t on)
{
	struct req r;
	struct sa_inform_info *ii = (struct sa_inform_info *)r.data;
	struct mad_addr from = { .lid = lid, .qpn = 1 };
	uint8_t gid[16] = { 0 };
	int rc;

	memset(&r, 0, sizeof(r));
	r.q = (struct sa_query){ .method = MAD_METHOD_SET,
				 .attr_id = SA_ATTR_INFORM_INFO, .tmpl = r.data,
				 .tmpl_len = sizeof(r.data) };
	r.out.rec_size = sizeof(*ii);
	ii->lid_range_begin = htobe16(0xffff);
	ii->is_generic = 1;
	ii->subscribe = on;
	ii->type = htobe16(0xffff);
	ii->trap_num = htobe16((uint16_t)trap);
	ii->qpn_resp_time = htobe32(1u << 8);
	if (port)
		gid_of(port, gid);
	rc = sa_inform_set(st, &r.q, &from, gid, &r.out);
	free(r.out.buf);
	return rc;
}

START_TEST(test_inform_quota)
{
	struct sa_state *st = sa_state_new(NULL);

	for (unsigned t = 0; t < SA_DEF_SUBSCRIPTIONS_PER_PORT; t++)
		ck_assert_int_eq(subscribe(st, 1, 10, 100 + t, 1), 0);
	ck_assert_int_eq(subscribe(st, 1, 10, 999, 1), -SA_STATUS_NO_RESOURCES);
	/* The same subscription again is no new slot. */
	ck_assert_int_eq(subscribe(st, 1, 10, 100, 1), 0);
	/* Others are not locked out; unknown requesters are refused. */
	ck_assert_int_eq(subscribe(st, 2, 11, 999, 1), 0);
	ck_assert_int_eq(subscribe(st, 0, 12, 999, 1), -SA_STATUS_REQ_INVALID);
	/* Unsubscribing frees a slot. */
	ck_assert_int_eq(subscribe(st, 1, 10, 100, 0), 0);
	ck_assert_int_eq(subscribe(st, 1, 10, 999, 1), 0);
	ck_assert_uint_eq(sa_state_subscribers(st), SA_DEF_SUBSCRIPTIONS_PER_PORT + 1);
	ck_assert_uint_eq(sa_state_stats(st)->sub_quota, 1);
	sa_state_free(st);

	struct sa_state_limits lim = { .max_subscriptions = 5 };
	st = sa_state_new(&lim);
	for (unsigned p = 1; p <= 6; p++)
		ck_assert_int_eq(subscribe(st, p, (uint16_t)p, 64, 1),
				 p == 6 ? -SA_STATUS_NO_RESOURCES : 0);
	ck_assert_uint_eq(sa_state_stats(st)->sub_full, 1);
	sa_state_free(st);
}
END_TEST

/* The fabric after a sweep, for the prune: ports 1 and 3 at LIDs 1, 3;
 * port 4 now at LID 40 (it was at 4). */
static bool present(void *arg, uint64_t guid, uint16_t lid)
{
	(void)arg;
	return (guid == 0x1001 && lid == 1) || (guid == 0x1003 && lid == 3) ||
	       (guid == 0x1004 && lid == 40);
}

START_TEST(test_prune_departed)
{
	struct sa_state *st = sa_state_new(NULL);

	for (unsigned p = 1; p <= 4; p++) {
		ck_assert_int_eq(subscribe(st, p, (uint16_t)p, 64, 1), 0);
		ck_assert_int_eq(subscribe(st, p, (uint16_t)p, 65, 1), 0);
		ck_assert_int_eq(svc_set(st, p, 1, p, 600, 0, NULL), 0);
	}
	/* Port 2 left, port 4's LID moved: their Reports would go nowhere
	 * or to someone else. */
	ck_assert_uint_eq(sa_state_prune(st, present, NULL), 4);
	ck_assert_uint_eq(sa_state_subscribers(st), 4);
	ck_assert_uint_eq(sa_state_stats(st)->sub_pruned, 4);
	/* ServiceRecords stay until their lease runs out (as in OpenSM). */
	ck_assert_uint_eq(sa_state_services(st), 4);

	struct mad_addr a1 = { .lid = 1, .qpn = 1 }, a3 = { .lid = 3, .qpn = 1 };
	ck_assert_uint_eq(sa_inform_dest_count(st, &a1), 2);
	ck_assert_uint_eq(sa_inform_drop_dest(st, &a1), 2);
	ck_assert_uint_eq(sa_inform_dest_count(st, &a1), 0);
	ck_assert_uint_eq(sa_inform_dest_count(st, &a3), 2);
	ck_assert_uint_eq(sa_state_stats(st)->sub_dropped, 2);
	sa_state_free(st);
}
END_TEST

START_TEST(test_service_key_trusted_only)
{
	struct sa_state *st = sa_state_new(NULL);
	struct req r;
	uint8_t rgid[16];
	struct sa_service_record *t = req_init(&r, MAD_METHOD_SET, SR_RID);
	const struct sa_service_record *got;

	gid_of(1, rgid);
	t->service_id = htobe64(9);
	gid_of(1, t->service_gid);
	t->service_pkey = htobe16(0xffff);
	memset(t->service_key, 0xa5, sizeof(t->service_key));
	ck_assert_int_eq(sa_service_request(st, &r.q, rgid, 0, &r.out), 0);
	got = (const void *)r.out.buf;
	ck_assert_uint_eq(got->service_key[0], 0);	/* not echoed either */
	free(r.out.buf);

	/* Another host's GetTable: the record, without its key. */
	t = req_init(&r, MAD_METHOD_GET_TABLE, SR_ID);
	t->service_id = htobe64(9);
	gid_of(2, rgid);
	ck_assert_int_eq(sa_service_request(st, &r.q, rgid, 0, &r.out), 0);
	ck_assert_uint_eq(r.out.count, 1);
	got = (const void *)r.out.buf;
	for (unsigned i = 0; i < sizeof(got->service_key); i++)
		ck_assert_uint_eq(got->service_key[i], 0);
	free(r.out.buf);
	/* A trusted one sees it. */
	t = req_init(&r, MAD_METHOD_GET_TABLE, SR_ID);
	t->service_id = htobe64(9);
	r.q.sm_key = SA_SM_KEY_TRUSTED;
	ck_assert_int_eq(sa_service_request(st, &r.q, rgid, 0, &r.out), 0);
	got = (const void *)r.out.buf;
	ck_assert_uint_eq(got->service_key[15], 0xa5);
	free(r.out.buf);
	sa_state_free(st);
}
END_TEST

static Suite *sa_service_suite(void)
{
	Suite *s = suite_create("sa_service");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_set_needs_owner);
	tcase_add_test(tc, test_set_needs_identity);
	tcase_add_test(tc, test_delete_rules);
	tcase_add_test(tc, test_service_quota);
	tcase_add_test(tc, test_trusted_quota);
	tcase_add_test(tc, test_lease_cap);
	tcase_add_test(tc, test_inform_quota);
	tcase_add_test(tc, test_prune_departed);
	tcase_add_test(tc, test_service_key_trusted_only);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sa_service_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
