/*
 * check_health_checks.c - each health check over a model built by hand
 * (from topology text): links, the reference topology, identity, error
 * rates from counters (hostile ones included), unhealthy ports, routing.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health/checks.h"
#include "model/topo_load.h"

/* Two switches joined by two cables, three hosts, all 4x QDR. */
static const char *const NET =
	"Switch 8 \"S-0000000000000010\" # \"sw1\"\n"
	"[1] \"H-0000000000000100\"[1] # 4xQDR\n"
	"[2] \"H-0000000000000200\"[1] # 4xQDR\n"
	"[3] \"S-0000000000000020\"[3] # 4xQDR\n"
	"[4] \"S-0000000000000020\"[4] # 4xQDR\n"
	"Switch 8 \"S-0000000000000020\" # \"sw2\"\n"
	"[1] \"H-0000000000000300\"[1] # 4xQDR\n"
	"Ca 2 \"H-0000000000000100\" # \"h1\"\n"
	"Ca 2 \"H-0000000000000200\" # \"h2\"\n"
	"Ca 2 \"H-0000000000000300\" # \"h3\"\n";

static void load(struct fabric *f, const char *text, unsigned flags)
{
	char *b = strdup(text), err[256];

	ck_assert_ptr_nonnull(b);
	fabric_init(f);
	ck_assert_msg(topo_parse_flags(f, "t.net", b, strlen(b), flags, err,
				       sizeof(err)) == 0, "%s", err);
	free(b);
}

/* Replace line `from` of NET by `to` (both whole lines, \n included). */
static char *edit(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	char *out;

	ck_assert_ptr_nonnull(at);
	out = malloc(strlen(text) + strlen(to) + 1);
	ck_assert_ptr_nonnull(out);
	memcpy(out, text, (size_t)(at - text));
	strcpy(out + (at - text), to);
	strcat(out, at + strlen(from));
	return out;
}

static struct fab_port *port(struct fabric *f, uint64_t guid, unsigned pn)
{
	int32_t id = fabric_find(f, guid);

	ck_assert_int_ne(id, FAB_NONE);
	return &fabric_node(f, id)->ports[pn];
}

/* Enabled width/speed as ibsim reports them: the link's own. */
static void enable(struct fab_port *p, uint8_t width_mask, uint8_t speed_mask)
{
	p->pi.link_width_enabled = width_mask;
	SET_LO4(p->pi.speed_active_enabled, speed_mask);
}

static unsigned count_kind(const struct hf_set *s, enum hf_kind k)
{
	unsigned n = 0;

	for (size_t i = 0; i < hf_set_count(s); i++)
		n += hf_set_at(s, i)->kind == k;
	return n;
}

static const struct hf_finding *find_kind(const struct hf_set *s,
					  enum hf_kind k, uint64_t guid,
					  unsigned pn)
{
	for (size_t i = 0; i < hf_set_count(s); i++) {
		const struct hf_finding *x = hf_set_at(s, i);

		if (x->kind == k && x->guid == guid && x->port == pn)
			return x;
	}
	return NULL;
}

static void run_links(const struct fabric *f, const struct health_policy *p,
		      struct hf_set *s)
{
	hf_set_begin(s, HF_G_SWEEP);
	hc_links(f, p, s, 1);
	hf_set_end(s, 1, NULL, NULL);
}

START_TEST(test_links)
{
	struct fabric f;
	struct hf_set s;
	struct health_policy p;
	const struct hf_finding *x;

	health_policy_default(&p);
	ck_assert_int_eq(hf_set_init(&s, 64), 0);
	load(&f, NET, 0);
	/* ibsim: Supported says 1x-12x, SDR-QDR; enabled = active: healthy */
	for (size_t i = 0; i < f.n_nodes; i++)
		for (unsigned pn = 1; pn <= f.nodes[i].num_ports; pn++) {
			struct fab_port *pp = &f.nodes[i].ports[pn];

			if (!pp->valid)
				continue;
			pp->pi.link_width_supported = 1 | 2 | 8;
			SET_HI4(pp->pi.speed_supported_state, 7);
			enable(pp, 2, 4);
		}
	run_links(&f, &p, &s);
	ck_assert_uint_eq(hf_set_count(&s), 0);

	/* sw1[2]-h2: both enable 4x but the link came up 1x: degraded, once */
	port(&f, 0x10, 2)->pi.link_width_active = 1;
	port(&f, 0x200, 1)->pi.link_width_active = 1;
	/* sw1[1]-h1: one end enables only 1x: 1x is the best, not degraded */
	port(&f, 0x10, 1)->pi.link_width_active = 1;
	port(&f, 0x100, 1)->pi.link_width_active = 1;
	enable(port(&f, 0x100, 1), 1, 4);
	/* sw2[1]-h3: both enable QDR, runs SDR */
	SET_HI4(port(&f, 0x20, 1)->pi.speed_active_enabled, 1);
	SET_HI4(port(&f, 0x300, 1)->pi.speed_active_enabled, 1);
	/* sw1[4]-sw2[4]: up but INIT after the sweep */
	pi_set_port_state(&port(&f, 0x10, 4)->pi, PORT_STATE_INIT);
	pi_set_port_state(&port(&f, 0x20, 4)->pi, PORT_STATE_INIT);
	run_links(&f, &p, &s);
	ck_assert_uint_eq(count_kind(&s, HF_LINK_DEGRADED), 2);
	x = find_kind(&s, HF_LINK_DEGRADED, 0x10, 2);
	ck_assert_ptr_nonnull(x);
	ck_assert_str_eq(x->desc, "sw1");
	ck_assert_uint_eq(x->peer_guid, 0x200);
	ck_assert_uint_eq(x->peer_port, 1);
	ck_assert_str_eq(x->peer_desc, "h2");
	ck_assert_ptr_nonnull(strstr(x->text, "1xQDR"));
	ck_assert_ptr_nonnull(find_kind(&s, HF_LINK_DEGRADED, 0x20, 1));
	ck_assert_uint_eq(count_kind(&s, HF_LINK_NOT_ACTIVE), 1);
	x = find_kind(&s, HF_LINK_NOT_ACTIVE, 0x10, 4);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(x->severity, HF_CRITICAL);
	ck_assert_uint_eq(hf_set_count(&s), 3);

	/* declared: 4x QDR everywhere: sw1[1]-h1 (1x) and sw2[1]-h3 (SDR)
	 * and sw1[2]-h2 (1x) are below it */
	p.expected_width = 4;
	p.expected_speed = 100;
	run_links(&f, &p, &s);
	ck_assert_uint_eq(count_kind(&s, HF_LINK_BELOW_EXPECTED), 3);
	ck_assert_ptr_nonnull(find_kind(&s, HF_LINK_BELOW_EXPECTED, 0x10, 1));
	/* only the higher end of a link left behind in ARMED: reported there */
	pi_set_port_state(&port(&f, 0x10, 4)->pi, PORT_STATE_ACTIVE);
	pi_set_port_state(&port(&f, 0x20, 4)->pi, PORT_STATE_ARMED);
	run_links(&f, &p, &s);
	ck_assert_uint_eq(count_kind(&s, HF_LINK_NOT_ACTIVE), 1);
	x = find_kind(&s, HF_LINK_NOT_ACTIVE, 0x20, 4);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->peer_guid, 0x10);
	ck_assert_ptr_nonnull(strstr(x->text, "ARMED"));
	/* a port down (not LinkUp) is not a link problem here */
	pi_set_phys_state(&port(&f, 0x10, 4)->pi, PHYS_STATE_POLLING);
	pi_set_phys_state(&port(&f, 0x20, 4)->pi, PHYS_STATE_POLLING);
	run_links(&f, &p, &s);
	ck_assert_uint_eq(count_kind(&s, HF_LINK_NOT_ACTIVE), 0);
	fabric_free(&f);
	hf_set_free(&s);
}
END_TEST

START_TEST(test_speed_math)
{
	struct smp_port_info a = { 0 }, b = { 0 };

	ck_assert_uint_eq(hc_width_best(1 | 2), 4);
	ck_assert_uint_eq(hc_width_best(255), 12);
	ck_assert_uint_eq(hc_width_best(0), 0);
	ck_assert_uint_eq(hc_width_lanes(16), 2);
	SET_LO4(a.speed_active_enabled, 7);
	SET_LO4(b.speed_active_enabled, 3);
	ck_assert_uint_eq(hc_speed_best_common(&a, 0, &b, 0), 50);
	/* extended speeds count only when both ends have them */
	a.speed_ext_enabled = 3;
	b.speed_ext_enabled = 2;
	ck_assert_uint_eq(hc_speed_best_common(&a, PI_CAP_HAS_EXT_SPEEDS, &b, 0), 50);
	ck_assert_uint_eq(hc_speed_best_common(&a, PI_CAP_HAS_EXT_SPEEDS, &b,
					       PI_CAP_HAS_EXT_SPEEDS), 250);
	SET_HI4(a.speed_ext_active_supp, 1);
	SET_HI4(a.speed_active_enabled, 4);
	ck_assert_uint_eq(hc_speed_active(&a, PI_CAP_HAS_EXT_SPEEDS), 140);
	ck_assert_uint_eq(hc_speed_active(&a, 0), 100);
	ck_assert_str_eq(hc_speed_name(250), "EDR");
	ck_assert_str_eq(hc_width_name(12), "12x");
}
END_TEST

static void run_ref(const struct fabric *f, const struct fabric *ref,
		    struct hf_set *s)
{
	hf_set_begin(s, HF_G_SWEEP);
	hc_reference(f, ref, s, 1);
	hf_set_end(s, 1, NULL, NULL);
}

START_TEST(test_reference)
{
	struct fabric f, ref;
	struct hf_set s;
	const struct hf_finding *x;
	char *t1, *t2, *t3, *t4, *t5;

	ck_assert_int_eq(hf_set_init(&s, 64), 0);
	load(&ref, NET, TOPO_LINK_AS_GIVEN);
	load(&f, NET, 0);
	run_ref(&f, &ref, &s);
	ck_assert_uint_eq(hf_set_count(&s), 0);
	fabric_free(&f);

	/* the fabric as found: sw1[2]-h2 cable moved to sw1[5]; sw2[1]-h3
	 * unplugged; a new cable sw2[2]-h1[2]; h3 renamed; sw1[3]-sw2[3]
	 * at 1x; a new host h4 */
	t1 = edit(NET, "[2] \"H-0000000000000200\"[1] # 4xQDR\n",
		  "[5] \"H-0000000000000200\"[1] # 4xQDR\n");
	t2 = edit(t1, "[1] \"H-0000000000000300\"[1] # 4xQDR\n",
		  "[2] \"H-0000000000000100\"[2] # 4xQDR\n"
		  "[6] \"H-0000000000000400\"[1] # 4xQDR\n");
	t3 = edit(t2, "# \"h3\"", "# \"h3-renamed\"");
	t4 = edit(t3, "[3] \"S-0000000000000020\"[3] # 4xQDR\n",
		  "[3] \"S-0000000000000020\"[3] # 1xQDR\n");
	t5 = malloc(strlen(t4) + 64);
	sprintf(t5, "%sCa 2 \"H-0000000000000400\" # \"h4\"\n", t4);
	load(&f, t5, 0);
	port(&f, 0x400, 1)->lid = 9;
	run_ref(&f, &ref, &s);

	/* named by the ports the cable is in now */
	ck_assert_ptr_null(find_kind(&s, HF_REF_CABLE_MOVED, 0x10, 2));
	x = find_kind(&s, HF_REF_CABLE_MOVED, 0x10, 5);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->peer_guid, 0x200);
	ck_assert_uint_eq(x->peer_port, 1);
	ck_assert_ptr_nonnull(strstr(x->text, "the fabric [5] - [1]"));
	ck_assert_ptr_nonnull(strstr(x->text, "the reference has [2] - [1]"));
	ck_assert_uint_eq(count_kind(&s, HF_REF_CABLE_MOVED), 1);
	x = find_kind(&s, HF_REF_MISSING_LINK, 0x20, 1);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->peer_guid, 0x300);
	ck_assert_str_eq(x->peer_desc, "h3-renamed");	/* as it is now */
	ck_assert_uint_eq(count_kind(&s, HF_REF_MISSING_LINK), 1);
	x = find_kind(&s, HF_REF_UNEXPECTED_LINK, 0x20, 2);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->peer_guid, 0x100);
	ck_assert_uint_eq(x->peer_port, 2);
	/* h4's link is covered by h4's own finding */
	ck_assert_uint_eq(count_kind(&s, HF_REF_UNEXPECTED_LINK), 1);
	x = find_kind(&s, HF_REF_UNEXPECTED_NODE, 0x400, 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->lid, 9);	/* the CA's LID, for a node finding */
	x = find_kind(&s, HF_REF_DESC_CHANGED, 0x300, 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_str_eq(x->desc, "h3-renamed");
	ck_assert_ptr_nonnull(strstr(x->text, "\"h3\""));
	x = find_kind(&s, HF_LINK_BELOW_REF, 0x10, 3);
	ck_assert_ptr_nonnull(x);
	ck_assert_ptr_nonnull(strstr(x->text, "4xQDR"));
	ck_assert_uint_eq(hf_set_count(&s), 6);

	/* a node gone: one finding, not one per link */
	fabric_free(&f);
	load(&f, "Switch 8 \"S-0000000000000010\" # \"sw1\"\n"
		 "[1] \"H-0000000000000100\"[1] # 4xQDR\n"
		 "[2] \"H-0000000000000200\"[1] # 4xQDR\n"
		 "Ca 2 \"H-0000000000000100\" # \"h1\"\n"
		 "Ca 2 \"H-0000000000000200\" # \"h2\"\n"
		 "Ca 2 \"H-0000000000000300\" # \"h3\"\n", 0);
	run_ref(&f, &ref, &s);
	x = find_kind(&s, HF_REF_MISSING_NODE, 0x20, 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(x->severity, HF_CRITICAL);
	ck_assert_str_eq(x->desc, "sw2");
	ck_assert_uint_eq(hf_set_count(&s), 1);

	/* a description the fabric reports with a byte the file cannot
	 * hold (written as a space) is no change */
	fabric_free(&f);
	load(&f, NET, 0);
	strcpy(fabric_node(&f, fabric_find(&f, 0x300))->desc, "h3");
	fabric_free(&ref);
	load(&ref, "Ca 2 \"H-0000000000000300\" # \"h 3\"\n", TOPO_LINK_AS_GIVEN);
	fabric_node(&f, fabric_find(&f, 0x300))->desc[1] = '\t';
	fabric_node(&f, fabric_find(&f, 0x300))->desc[2] = '3';
	fabric_node(&f, fabric_find(&f, 0x300))->desc[3] = '\0';
	hf_set_begin(&s, HF_G_SWEEP);
	hc_reference(&f, &ref, &s, 1);
	hf_set_end(&s, 1, NULL, NULL);
	ck_assert_uint_eq(count_kind(&s, HF_REF_DESC_CHANGED), 0);
	fabric_free(&ref);
	load(&ref, NET, TOPO_LINK_AS_GIVEN);
	fabric_free(&f);
	load(&f, "Switch 8 \"S-0000000000000010\" # \"sw1\"\n"
		 "[1] \"H-0000000000000100\"[1] # 4xQDR\n"
		 "[2] \"H-0000000000000200\"[1] # 4xQDR\n"
		 "Ca 2 \"H-0000000000000100\" # \"h1\"\n"
		 "Ca 2 \"H-0000000000000200\" # \"h2\"\n"
		 "Ca 2 \"H-0000000000000300\" # \"h3\"\n", 0);
	/* no reference: nothing */
	run_ref(&f, NULL, &s);
	ck_assert_uint_eq(hf_set_count(&s), 0);
	fabric_free(&f);
	fabric_free(&ref);
	free(t1); free(t2); free(t3); free(t4); free(t5);
	hf_set_free(&s);
}
END_TEST

/* A reference without link annotations states no width or speed: a 1x
 * SDR link is not below it. */
START_TEST(test_reference_unstated)
{
	struct fabric f, ref;
	struct hf_set s;

	ck_assert_int_eq(hf_set_init(&s, 64), 0);
	load(&ref, "Switch 8 \"S-0000000000000010\"\n"
		   "[1] \"H-0000000000000100\"[1]\n"
		   "Ca 2 \"H-0000000000000100\"\n", TOPO_LINK_AS_GIVEN);
	load(&f, "Switch 8 \"S-0000000000000010\"\n"
		 "[1] \"H-0000000000000100\"[1] # 1xSDR\n"
		 "Ca 2 \"H-0000000000000100\"\n", 0);
	run_ref(&f, &ref, &s);
	ck_assert_uint_eq(hf_set_count(&s), 0);
	fabric_free(&ref);
	/* without the flag the reference would claim 4x */
	load(&ref, "Switch 8 \"S-0000000000000010\"\n"
		   "[1] \"H-0000000000000100\"[1]\n"
		   "Ca 2 \"H-0000000000000100\"\n", 0);
	run_ref(&f, &ref, &s);
	ck_assert_uint_eq(count_kind(&s, HF_LINK_BELOW_REF), 1);
	fabric_free(&ref);
	fabric_free(&f);
	hf_set_free(&s);
}
END_TEST

START_TEST(test_identity)
{
	struct fabric f;
	struct hf_set s;
	char *t1, *t2;
	const struct hf_finding *x;
	uint64_t dups[] = { 0x300 };
	struct hc_lid_conflict lc = { .lid = 7, .port_guid = 0x101,
				      .other_port_guid = 0x201 };
	struct hc_identity_in in = { dups, 1, &lc, 1 };

	ck_assert_int_eq(hf_set_init(&s, 64), 0);
	/* h2 takes h1's name; sw2 takes "h1" too: another type, no match */
	t1 = edit(NET, "# \"h2\"", "# \"h1\"");
	t2 = edit(t1, "# \"sw2\"", "# \"h1\"");
	load(&f, t2, 0);
	hf_set_begin(&s, HF_G_SWEEP);
	hc_identity(&f, NULL, &s, 1);
	hf_set_end(&s, 1, NULL, NULL);
	ck_assert_uint_eq(count_kind(&s, HF_DUP_DESC), 2);
	x = find_kind(&s, HF_DUP_DESC, 0x100, 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->peer_guid, 0x200);
	x = find_kind(&s, HF_DUP_DESC, 0x200, 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->peer_guid, 0x100);
	ck_assert_ptr_null(find_kind(&s, HF_DUP_DESC, 0x20, 0));

	hf_set_begin(&s, HF_G_SWEEP);
	hc_identity(&f, &in, &s, 2);
	hf_set_end(&s, 2, NULL, NULL);
	x = find_kind(&s, HF_DUP_GUID, 0x300, 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(x->severity, HF_CRITICAL);
	ck_assert_str_eq(x->desc, "h3");
	x = find_kind(&s, HF_LID_CONFLICT, 0x100, 1);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(x->severity, HF_WARNING);
	ck_assert_uint_eq(x->detail, 7);
	ck_assert_uint_eq(x->peer_guid, 0x200);
	ck_assert_uint_eq(x->peer_port, 1);
	ck_assert_str_eq(x->peer_desc, "h1");
	ck_assert_uint_eq(hf_set_count(&s), 4);
	fabric_free(&f);

	/* unique names: the duplicate findings close */
	load(&f, NET, 0);
	hf_set_begin(&s, HF_G_SWEEP);
	hc_identity(&f, NULL, &s, 3);
	hf_set_end(&s, 3, NULL, NULL);
	ck_assert_uint_eq(hf_set_count(&s), 0);
	fabric_free(&f);
	free(t1);
	free(t2);
	hf_set_free(&s);
}
END_TEST

/* A port's counters as the store keeps them after a read at time t
 * that added `d` to counter c. */
static void bump(struct pc_port *cp, unsigned c, uint64_t d, double t)
{
	memset(cp->delta, 0, sizeof(cp->delta));
	cp->total[c] += d;
	cp->delta[c] = d;
	cp->raw[c] += d;
	cp->prev_read = cp->last_read;
	cp->last_read = t;
	cp->reads++;
}

static void run_counters(struct hc_counter_state *st, const struct pc_port *cp,
			 const struct fabric *f, const struct health_policy *p,
			 struct hf_set *s, double now)
{
	hf_set_begin(s, HF_G_COUNTERS);
	hc_counters(st, cp, 1, f, p, s, now);
	hf_set_end(s, now, NULL, NULL);
}

START_TEST(test_counters)
{
	struct fabric f;
	struct hf_set s;
	struct health_policy p;
	struct hc_counter_state st;
	struct pc_port cp = { .node_guid = 0x10, .port = 2, .lid = 1 };
	const struct hf_finding *x;
	struct hf_finding key = { .kind = HF_ERROR_RATE, .guid = 0x10,
				  .port = 2, .detail = PC_SYMBOL_ERR };

	health_policy_default(&p);
	ck_assert_int_eq(hf_set_init(&s, 64), 0);
	hc_counter_state_init(&st);
	load(&f, NET, 0);
	bump(&cp, PC_SYMBOL_ERR, 0, 0);
	run_counters(&st, &cp, &f, &p, &s, 0);
	ck_assert_uint_eq(hf_set_count(&s), 0);
	/* 9 symbol errors: below 10 per hour */
	bump(&cp, PC_SYMBOL_ERR, 9, 10);
	run_counters(&st, &cp, &f, &p, &s, 10);
	ck_assert_uint_eq(hf_set_count(&s), 0);
	/* one more in the window: 10, a warning, named with its peer */
	bump(&cp, PC_SYMBOL_ERR, 1, 20);
	run_counters(&st, &cp, &f, &p, &s, 20);
	x = hf_set_find(&s, &key);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(x->severity, HF_WARNING);
	ck_assert_str_eq(x->desc, "sw1");
	ck_assert_uint_eq(x->peer_guid, 0x200);
	ck_assert_uint_eq(x->value, 10);
	ck_assert_ptr_nonnull(strstr(x->text, "SymbolErrorCounter"));
	/* a read without increments keeps it open: the window holds them */
	bump(&cp, PC_SYMBOL_ERR, 0, 30);
	run_counters(&st, &cp, &f, &p, &s, 30);
	ck_assert_ptr_nonnull(hf_set_find(&s, &key));
	/* 100 in all: critical (ten times the threshold) */
	bump(&cp, PC_SYMBOL_ERR, 90, 40);
	run_counters(&st, &cp, &f, &p, &s, 40);
	ck_assert_int_eq(hf_set_find(&s, &key)->severity, HF_CRITICAL);
	/* an hour and a half later without errors: the window slid past */
	bump(&cp, PC_SYMBOL_ERR, 0, 2000);
	run_counters(&st, &cp, &f, &p, &s, 2000);
	bump(&cp, PC_SYMBOL_ERR, 0, 5400);
	run_counters(&st, &cp, &f, &p, &s, 5400);
	ck_assert_ptr_null(hf_set_find(&s, &key));
	/* PortXmitWait above its threshold: congestion */
	bump(&cp, PC_XMIT_WAIT, 2000000, 5410);
	run_counters(&st, &cp, &f, &p, &s, 5410);
	ck_assert_uint_eq(count_kind(&s, HF_CONGESTION), 1);
	ck_assert_uint_eq(hf_set_count(&s), 1);
	fabric_free(&f);
	hc_counter_state_free(&st);
	hf_set_free(&s);
}
END_TEST

/* Hostile counters: a clear by someone else, a counter going backwards
 * (the store reports no delta), an absurd jump: never a critical. */
START_TEST(test_counters_hostile)
{
	struct hf_set s;
	struct health_policy p;
	struct hc_counter_state st;
	struct pc_port cp = { .node_guid = 0x99, .port = 1, .lid = 9 };
	struct hf_finding key = { .kind = HF_ERROR_RATE, .guid = 0x99,
				  .port = 1, .detail = PC_RCV_ERR };
	struct hf_summary sum;

	health_policy_default(&p);
	ck_assert_int_eq(hf_set_init(&s, 64), 0);
	hc_counter_state_init(&st);
	bump(&cp, PC_RCV_ERR, 0, 0);
	bump(&cp, PC_RCV_ERR, 50, 10);
	run_counters(&st, &cp, NULL, &p, &s, 10);
	ck_assert_ptr_nonnull(hf_set_find(&s, &key));
	ck_assert_uint_eq(hf_set_find(&s, &key)->lid, 9);	/* no model */
	/* perfquery -R: the store notices the clear: acknowledged, closed */
	cp.ext_clears++;
	bump(&cp, PC_RCV_ERR, 0, 20);
	run_counters(&st, &cp, NULL, &p, &s, 20);
	ck_assert_ptr_null(hf_set_find(&s, &key));
	/* an increment as big as the counter is wide: not errors */
	bump(&cp, PC_RCV_ERR, 1ull << 63, 30);
	run_counters(&st, &cp, NULL, &p, &s, 30);
	bump(&cp, PC_LINK_DOWNED, 257, 40);	/* 8 bits: at most 256 */
	run_counters(&st, &cp, NULL, &p, &s, 40);
	hf_set_summary(&s, &sum);
	ck_assert_uint_eq(sum.count[HF_CRITICAL], 0);
	ck_assert_uint_eq(hf_set_count(&s), 0);
	/* the store starts the port afresh (it left and came back): totals
	 * below the window's start are no errors, and count again from
	 * there */
	bump(&cp, PC_SYMBOL_ERR, 5, 45);
	run_counters(&st, &cp, NULL, &p, &s, 45);
	cp.ext_clears++;		/* the window starts at 5 */
	bump(&cp, PC_SYMBOL_ERR, 0, 45.5);
	run_counters(&st, &cp, NULL, &p, &s, 45.5);
	memset(cp.total, 0, sizeof(cp.total));
	bump(&cp, PC_SYMBOL_ERR, 0, 46);
	run_counters(&st, &cp, NULL, &p, &s, 46);
	bump(&cp, PC_SYMBOL_ERR, 9, 47);
	run_counters(&st, &cp, NULL, &p, &s, 47);
	ck_assert_uint_eq(hf_set_count(&s), 0);
	bump(&cp, PC_SYMBOL_ERR, 1, 48);
	run_counters(&st, &cp, NULL, &p, &s, 48);
	ck_assert_uint_eq(count_kind(&s, HF_ERROR_RATE), 1);
	ck_assert_uint_eq(hf_set_at(&s, 0)->value, 10);
	/* a first read that finds 500 errors counted since the last clear,
	 * over an unknown time: a warning, not a critical */
	{
		struct pc_port old = { .node_guid = 0x97, .port = 1 };
		struct hf_finding k = { .kind = HF_ERROR_RATE, .guid = 0x97,
					.port = 1, .detail = PC_SYMBOL_ERR };

		bump(&old, PC_SYMBOL_ERR, 500, 1000);
		old.prev_read = 0;
		hf_set_begin(&s, HF_G_COUNTERS);
		hc_counter_port(&st, &old, NULL, &p, &s, 1000, NULL);
		hf_set_end(&s, 1000, NULL, NULL);
		ck_assert_ptr_nonnull(hf_set_find(&s, &k));
		ck_assert_int_eq(hf_set_find(&s, &k)->severity, HF_WARNING);
		ck_assert_ptr_nonnull(strstr(hf_set_find(&s, &k)->text,
					     "last cleared"));
		/* half an hour on, the window slides past the first read */
		bump(&old, PC_SYMBOL_ERR, 0, 2900);
		hf_set_begin(&s, HF_G_COUNTERS);
		hc_counter_port(&st, &old, NULL, &p, &s, 2900, NULL);
		hf_set_end(&s, 2900, NULL, NULL);
		ck_assert_ptr_null(hf_set_find(&s, &k));
	}
	/* a port whose first read is all there is: nothing */
	struct pc_port fresh = { .node_guid = 0x98, .port = 1 };
	hf_set_begin(&s, HF_G_COUNTERS);
	hc_counter_port(&st, &fresh, NULL, &p, &s, 50, NULL);
	hf_set_end(&s, 50, NULL, NULL);
	ck_assert_uint_eq(hf_set_count(&s), 0);
	/* the window table is bounded */
	p.max_ports = 2;
	for (unsigned i = 0; i < 5; i++) {
		struct pc_port q = { .node_guid = 0x1000 + i, .port = 1 };

		bump(&q, PC_SYMBOL_ERR, 0, 0);
		bump(&q, PC_SYMBOL_ERR, 1, 10 + i);
		hf_set_begin(&s, HF_G_COUNTERS);
		hc_counter_port(&st, &q, NULL, &p, &s, 60, NULL);
		hf_set_end(&s, 60, NULL, NULL);
	}
	ck_assert_uint_le(st.n, 2);
	hc_counter_state_free(&st);
	hf_set_free(&s);
}
END_TEST

/* Discards are the doing of a link that went down: they count again from
 * the first read after the change; a steady link's discards are judged. */
START_TEST(test_counters_link_change)
{
	struct hf_set s;
	struct health_policy p;
	struct hc_counter_state st;
	struct hh_port link = { .guid = 0x99, .port = 3, .known = true,
				.up = true };
	struct pc_port cp = { .node_guid = 0x99, .port = 3 };
	struct hf_finding k = { .kind = HF_ERROR_RATE, .guid = 0x99,
				.port = 3, .detail = PC_XMIT_DISCARDS };

	health_policy_default(&p);
	p.err_per_hour[PC_XMIT_DISCARDS] = 100;
	ck_assert_int_eq(hf_set_init(&s, 64), 0);
	hc_counter_state_init(&st);
#define READ(d, t) do {							\
		bump(&cp, PC_XMIT_DISCARDS, (d), (t));			\
		hf_set_begin(&s, HF_G_COUNTERS);			\
		hc_counter_port(&st, &cp, NULL, &p, &s, (t), &link);	\
		hf_set_end(&s, (t), NULL, NULL);			\
	} while (0)
	READ(0, 10);
	READ(60, 20);
	ck_assert_ptr_null(hf_set_find(&s, &k));
	/* the link goes down: what the reads count meanwhile is its doing */
	link.up = false;
	link.changes++;
	READ(70, 30);
	READ(70, 40);
	ck_assert_ptr_null(hf_set_find(&s, &k));
	/* back up: the read after it holds the last discards of the outage */
	link.up = true;
	link.changes++;
	READ(30, 50);
	ck_assert_ptr_null(hf_set_find(&s, &k));
	/* a steady link: 60 + 50 discards reach the threshold */
	READ(60, 60);
	ck_assert_ptr_null(hf_set_find(&s, &k));
	READ(50, 70);
	ck_assert_ptr_nonnull(hf_set_find(&s, &k));
	ck_assert_uint_eq(hf_set_find(&s, &k)->value, 110);
	/* without history, everything counts */
	{
		struct pc_port q = { .node_guid = 0x9a, .port = 1 };
		struct hf_finding kq = k;

		kq.guid = 0x9a;
		kq.port = 1;
		bump(&q, PC_XMIT_DISCARDS, 0, 10);
		hf_set_begin(&s, HF_G_COUNTERS);
		hc_counter_port(&st, &q, NULL, &p, &s, 10, NULL);
		hf_set_end(&s, 10, NULL, NULL);
		bump(&q, PC_XMIT_DISCARDS, 200, 20);
		hf_set_begin(&s, HF_G_COUNTERS);
		hc_counter_port(&st, &q, NULL, &p, &s, 20, NULL);
		hf_set_end(&s, 20, NULL, NULL);
		ck_assert_ptr_nonnull(hf_set_find(&s, &kq));
	}
#undef READ
	hc_counter_state_free(&st);
	hf_set_free(&s);
}
END_TEST

START_TEST(test_unhealthy)
{
	struct fabric f;
	struct hf_set s;
	struct health_policy p;
	struct health_history h;
	const struct hf_finding *x;

	health_policy_default(&p);
	p.flap_count = 2;
	p.unresponsive_k = 2;
	p.unresponsive_n = 3;
	p.trap_rate = 5;
	ck_assert_int_eq(hf_set_init(&s, 64), 0);
	ck_assert_int_eq(hh_init(&h, &p), 0);
	load(&f, NET, 0);
	port(&f, 0x100, 1)->lid = 5;
	/* both ends of sw1[1]-h1 see the flaps: one finding, at sw1 */
	for (int i = 0; i < 2; i++) {
		hh_link_state(&h, 0x10, 1, false, 10 * i);
		hh_link_state(&h, 0x10, 1, true, 10 * i + 5);
		hh_link_state(&h, 0x100, 1, false, 10 * i);
		hh_link_state(&h, 0x100, 1, true, 10 * i + 5);
	}
	hh_node_poll(&h, 0x200, false, 1);
	hh_node_poll(&h, 0x200, false, 2);
	hh_node_poll(&h, 0x300, true, 2);
	hh_set_refused(&h, 0x300, 2);
	hh_node_poll(&h, 0x300, true, 3);
	hh_set_refused(&h, 0x300, 3);
	for (int i = 0; i < 6; i++) {
		hh_trap(&h, 5, 20);
		hh_trap(&h, 77, 20);	/* no port of the model has it */
	}
	hf_set_begin(&s, HF_G_HISTORY);
	hc_unhealthy(&h, &f, &p, &s, 20);
	hf_set_end(&s, 20, NULL, NULL);
	x = find_kind(&s, HF_FLAPPING, 0x10, 1);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->peer_guid, 0x100);
	ck_assert_int_eq(x->severity, HF_CRITICAL);
	ck_assert_uint_eq(count_kind(&s, HF_FLAPPING), 1);
	ck_assert_ptr_nonnull(find_kind(&s, HF_UNRESPONSIVE, 0x200, 0));
	ck_assert_ptr_nonnull(find_kind(&s, HF_REFUSING_SETS, 0x300, 0));
	x = find_kind(&s, HF_NOISY, 0x100, 1);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->lid, 5);
	ck_assert_str_eq(x->desc, "h1");
	x = find_kind(&s, HF_NOISY, 0, 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->lid, 77);
	ck_assert_uint_eq(hf_set_count(&s), 5);
	/* much later, all quiet: everything closes */
	hh_node_poll(&h, 0x200, true, 3000);
	hh_node_poll(&h, 0x200, true, 3001);
	hh_node_poll(&h, 0x300, true, 3001);
	hh_node_poll(&h, 0x300, true, 3002);
	hf_set_begin(&s, HF_G_HISTORY);
	hc_unhealthy(&h, &f, &p, &s, 3003);
	hf_set_end(&s, 3003, NULL, NULL);
	ck_assert_uint_eq(hf_set_count(&s), 0);
	hh_free(&h);
	fabric_free(&f);
	hf_set_free(&s);
}
END_TEST

START_TEST(test_routing)
{
	struct hf_set s;
	struct hc_routing_verdict v = { .cycles = 3, .unreachable = 2,
					.pairs = 100, .bad_lid = 7,
					.bad_switch_guid = 0x10 };

	ck_assert_int_eq(hf_set_init(&s, 8), 0);
	hf_set_begin(&s, HF_G_ROUTING);
	hc_routing(&v, &s, 1);
	hf_set_end(&s, 1, NULL, NULL);
	ck_assert_uint_eq(count_kind(&s, HF_ROUTING_CYCLE), 1);
	ck_assert_uint_eq(count_kind(&s, HF_ROUTING_UNREACHABLE), 1);
	/* the first failure named changes: still the same finding */
	v.bad_switch_guid = 0x20;
	v.cycles = 0;
	hf_set_begin(&s, HF_G_ROUTING);
	hc_routing(&v, &s, 2);
	hf_set_end(&s, 2, NULL, NULL);
	ck_assert_uint_eq(hf_set_count(&s), 1);
	ck_assert(hf_set_at(&s, 0)->first_seen == 1);
	memset(&v, 0, sizeof(v));
	hf_set_begin(&s, HF_G_ROUTING);
	hc_routing(&v, &s, 3);
	hf_set_end(&s, 3, NULL, NULL);
	ck_assert_uint_eq(hf_set_count(&s), 0);
	hf_set_free(&s);
}
END_TEST

/* Hostile models and inputs, deterministic: every PortInfo byte random,
 * counters anywhere in 64 bits, history fed garbage.  No check may read
 * out of bounds (ASan), every finding stays well formed, the set
 * bounded. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

START_TEST(test_random_inputs)
{
	struct fabric f, ref;
	struct hf_set s;
	struct health_policy p;
	struct health_history h;
	struct hc_counter_state st;
	struct pc_port cp[4];

	health_policy_default(&p);
	p.expected_width = 4;
	p.expected_speed = 100;
	p.max_ports = 8;
	ck_assert_int_eq(hf_set_init(&s, 32), 0);
	ck_assert_int_eq(hh_init(&h, &p), 0);
	hc_counter_state_init(&st);
	memset(cp, 0, sizeof(cp));
	load(&ref, NET, TOPO_LINK_AS_GIVEN);
	for (int round = 0; round < 300; round++) {
		load(&f, NET, 0);
		for (size_t i = 0; i < f.n_nodes; i++) {
			struct fab_node *n = &f.nodes[i];

			for (unsigned pn = 0; pn <= n->num_ports; pn++) {
				unsigned char *b = (unsigned char *)&n->ports[pn].pi;

				for (size_t k = 0; k < sizeof(n->ports[pn].pi); k++)
					b[k] = (unsigned char)rnd();
				n->ports[pn].valid = rnd() & 1;
				n->ports[pn].lid = (uint16_t)rnd();
				n->ports[pn].lmc = (uint8_t)rnd();
			}
			for (size_t k = 0; k < sizeof(n->desc) - 1; k++)
				n->desc[k] = (char)(rnd() % 4 ? 'a' + rnd() % 2 : rnd());
			n->desc[sizeof(n->desc) - 1] = '\0';
		}
		for (int k = 0; k < 20; k++) {
			hh_link_state(&h, rnd() % 4 ? 0x10 : rnd(), (uint8_t)rnd(),
				      rnd() & 1, (double)(rnd() % 100000));
			hh_node_poll(&h, rnd() % 8, rnd() & 1, round);
			hh_set_refused(&h, rnd() % 8, round);
			hh_trap(&h, (uint16_t)rnd(), (double)(rnd() % 1000) - 10);
		}
		hf_set_begin(&s, HF_G_ALL);
		hc_links(&f, &p, &s, round);
		hc_reference(&f, &ref, &s, round);
		hc_identity(&f, NULL, &s, round);
		hc_unhealthy(&h, &f, &p, &s, round);
		for (int k = 0; k < 4; k++) {
			cp[k].node_guid = k < 2 ? 0x10 : rnd();
			cp[k].port = (uint8_t)rnd();
			for (unsigned c = 0; c < PC_N; c++) {
				uint64_t d = rnd() >> (rnd() % 64);

				cp[k].delta[c] = d;
				cp[k].total[c] += d;
			}
			cp[k].ext_clears += rnd() % 3 == 0;
			cp[k].prev_read = cp[k].last_read;
			cp[k].last_read += (double)(rnd() % 4000) - 100;
			cp[k].reads++;
		}
		hc_counters(&st, cp, 4, &f, &p, &s, round);
		hf_set_end(&s, round, NULL, NULL);
		ck_assert_uint_le(hf_set_count(&s), 32);
		ck_assert_uint_le(st.n, 8);
		for (size_t i = 0; i < hf_set_count(&s); i++) {
			const struct hf_finding *x = hf_set_at(&s, i);

			ck_assert_int_lt(x->kind, HF_N_KINDS);
			ck_assert_int_lt(x->severity, HF_N_SEVERITIES);
			ck_assert_uint_lt(strlen(x->text), HF_TEXT_SIZE);
			ck_assert_uint_lt(strlen(x->desc), HF_DESC_SIZE);
			ck_assert(x->first_seen <= x->last_seen);
			for (const char *c = x->desc; *c; c++)
				ck_assert(*c >= 0x20 && *c < 0x7f);
		}
		fabric_free(&f);
	}
	fabric_free(&ref);
	hc_counter_state_free(&st);
	hh_free(&h);
	hf_set_free(&s);
}
END_TEST

static Suite *health_checks_suite(void)
{
	Suite *s = suite_create("health_checks");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_links);
	tcase_add_test(tc, test_speed_math);
	tcase_add_test(tc, test_reference);
	tcase_add_test(tc, test_reference_unstated);
	tcase_add_test(tc, test_identity);
	tcase_add_test(tc, test_counters);
	tcase_add_test(tc, test_counters_hostile);
	tcase_add_test(tc, test_counters_link_change);
	tcase_add_test(tc, test_unhealthy);
	tcase_add_test(tc, test_routing);
	tcase_add_test(tc, test_random_inputs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(health_checks_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
