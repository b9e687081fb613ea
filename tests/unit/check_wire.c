/*
 * check_wire.c - mad/wire.h against libibmad.
 *
 * Every expected byte image in this file is built by libibmad's field
 * tables (mad_set_field, mad_set_field64, mad_set_array), never through
 * the structs under test, and every value read back from an image made by
 * libibmad goes through our structs and accessors.  libibmad has been
 * reading and writing these MADs for infiniband-diags for twenty years, so
 * it is the independent reference.
 *
 * Each attribute is described by a table of fields: the libibmad field,
 * its width, a distinct value, and a getter/setter pair written against
 * wire.h (its accessors where it has them, the documented bit layout of
 * the struct member where it has none).  Four generic tests run over every
 * table:
 *
 *   decode    libibmad writes every field; our getters read every value.
 *   encode    our setters write every field; the 256 bytes equal
 *             libibmad's image.
 *   walk      one field at a time at its maximum (all ones): only that
 *             getter sees it, and our setter produces exactly the same
 *             bytes; a swapped offset, a wrong shift or a too-wide mask
 *             shows up here.
 *   isolate   every field at its maximum, then one field cleared by our
 *             setter: the image equals libibmad's with that field cleared,
 *             so no setter disturbs its neighbours.
 *
 * Attributes sit where the SM meets them: SMP attributes at byte 64 of a
 * 256-byte MAD (IB_SMP_DATA_OFFS), MAD/SMP/SA headers at byte 0.
 */
#include "config.h"

#include <check.h>
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "mad/wire.h"

/* ck_assert*() reports every passing check to the runner (a write per
 * call), which hot loops cannot afford: they use CHECK(). */
#define CHECK(expr, ...)	do { if (!(expr)) ck_abort_msg(__VA_ARGS__); } while (0)

/* ------------------------------------------------------------------ */
/* Field tables                                                         */
/* ------------------------------------------------------------------ */

typedef uint64_t (*get_fn)(const void *attr, unsigned idx);
typedef void (*set_fn)(void *attr, unsigned idx, uint64_t v);
/* Writes a field through libibmad at byte offset `offs` of the MAD. */
typedef void (*lset_fn)(uint8_t *mad, int offs, enum MAD_FIELDS f, uint64_t v);

struct field {
	char		name[40];
	enum MAD_FIELDS	f;
	unsigned	bits;
	int		off;	/* extra byte offset for the libibmad field */
	unsigned	idx;	/* table index handed to get/set */
	uint64_t	val;
	get_fn		get;
	set_fn		set;
	lset_fn		lset;	/* NULL: mad_set_field / mad_set_field64 */
};

struct attr {
	const char	*name;
	int		 base;	/* where the attribute starts in the MAD */
	struct field	*f;
	unsigned	 n;
};

static uint64_t field_max(const struct field *f)
{
	return f->bits >= 64 ? ~0ull : (1ull << f->bits) - 1;
}

static void lib_set(const struct attr *a, const struct field *f, uint8_t *mad,
		    uint64_t v)
{
	int offs = a->base + f->off;

	/* libibmad swizzles bytes within 32-bit words, base offset included */
	ck_assert_msg(offs >= 0 && offs % 4 == 0, "%s: bad libibmad offset %d",
		      f->name, offs);
	if (f->lset)
		f->lset(mad, offs, f->f, v);
	else if (f->bits > 32)
		mad_set_field64(mad, offs, f->f, v);
	else
		mad_set_field(mad, offs, f->f, (uint32_t)v);
}

static uint64_t our_get(const struct attr *a, const struct field *f,
			const uint8_t *mad)
{
	return f->get(mad + a->base, f->idx);
}

static void our_set(const struct attr *a, const struct field *f, uint8_t *mad,
		    uint64_t v)
{
	f->set(mad + a->base, f->idx, v);
}

/* Compare two MAD images; name the first differing byte. */
static void assert_image(const uint8_t *got, const uint8_t *want, size_t n,
			 const char *what, const char *field)
{
	if (!memcmp(got, want, n))
		return;
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i],
			      "%s, field %s: byte %zu is 0x%02x, libibmad has 0x%02x",
			      what, field, i, got[i], want[i]);
}

/* ------------------------------------------------------------------ */
/* Getter/setter generators                                            */
/* ------------------------------------------------------------------ */

#define DEF_U8(tag, T, m)							\
static uint64_t get_##tag(const void *a, unsigned i)			\
{ (void)i; return ((const T *)a)->m; }					\
static void set_##tag(void *a, unsigned i, uint64_t v)			\
{ (void)i; ((T *)a)->m = (uint8_t)v; }

#define DEF_BE(tag, T, m, n)							\
static uint64_t get_##tag(const void *a, unsigned i)			\
{ (void)i; return be##n##toh(((const T *)a)->m); }			\
static void set_##tag(void *a, unsigned i, uint64_t v)			\
{ (void)i; ((T *)a)->m = htobe##n((uint##n##_t)v); }

/* A sub-byte field of a uint8_t member, by its documented position. */
#define DEF_BITS(tag, T, m, shift, width)					\
static uint64_t get_##tag(const void *a, unsigned i)			\
{ (void)i; return (((const T *)a)->m >> (shift)) & ((1u << (width)) - 1); } \
static void set_##tag(void *a, unsigned i, uint64_t v)			\
{									\
	unsigned mask = ((1u << (width)) - 1) << (shift);		\
	T *p = a;							\
	(void)i;							\
	p->m = (uint8_t)((p->m & ~mask) | (((unsigned)v << (shift)) & mask)); \
}

/* A field with a wire.h getter and setter. */
#define DEF_ACC(tag, T, getter, setter)					\
static uint64_t get_##tag(const void *a, unsigned i)			\
{ (void)i; return getter((const T *)a); }				\
static void set_##tag(void *a, unsigned i, uint64_t v)			\
{ (void)i; setter((T *)a, (unsigned)v); }

/* A wire.h getter; the setter is the nibble macro on the member. */
#define DEF_ACC_HI4(tag, T, getter, m)					\
static uint64_t get_##tag(const void *a, unsigned i)			\
{ (void)i; return getter((const T *)a); }				\
static void set_##tag(void *a, unsigned i, uint64_t v)			\
{ (void)i; SET_HI4(((T *)a)->m, (unsigned)v); }
#define DEF_ACC_LO4(tag, T, getter, m)					\
static uint64_t get_##tag(const void *a, unsigned i)			\
{ (void)i; return getter((const T *)a); }				\
static void set_##tag(void *a, unsigned i, uint64_t v)			\
{ (void)i; SET_LO4(((T *)a)->m, (unsigned)v); }
/* No accessor in wire.h: the HI4/LO4 macros on the member. */
#define DEF_HI4(tag, T, m)							\
static uint64_t get_##tag(const void *a, unsigned i)			\
{ (void)i; return HI4(((const T *)a)->m); }				\
static void set_##tag(void *a, unsigned i, uint64_t v)			\
{ (void)i; SET_HI4(((T *)a)->m, (unsigned)v); }
#define DEF_LO4(tag, T, m)							\
static uint64_t get_##tag(const void *a, unsigned i)			\
{ (void)i; return LO4(((const T *)a)->m); }				\
static void set_##tag(void *a, unsigned i, uint64_t v)			\
{ (void)i; SET_LO4(((T *)a)->m, (unsigned)v); }

#define FLD(fld, nbits, v, tag)	{ #tag, fld, nbits, 0, 0, v, get_##tag, set_##tag, NULL }
#define FLDX(fld, nbits, v, tag, ls) { #tag, fld, nbits, 0, 0, v, get_##tag, set_##tag, ls }
#define NFIELDS(t)	(unsigned)(sizeof(t) / sizeof((t)[0]))

/* ------------------------------------------------------------------ */
/* MAD header (13.4.2)                                                  */
/* ------------------------------------------------------------------ */

typedef struct mad_hdr mh_t;
DEF_U8(mh_base, mh_t, base_version)
DEF_U8(mh_class, mh_t, mgmt_class)
DEF_U8(mh_classver, mh_t, class_version)
DEF_BITS(mh_method, mh_t, method, 0, 7)
DEF_BITS(mh_resp, mh_t, method, 7, 1)
DEF_BE(mh_status, mh_t, status, 16)
DEF_BE(mh_tid, mh_t, tid, 64)
DEF_BE(mh_attr, mh_t, attr_id, 16)
DEF_BE(mh_mod, mh_t, attr_mod, 32)

/* ClassSpecific as the two bytes the DR SMP gives it (hop ptr, hop cnt). */
static uint64_t get_mh_cs_hi(const void *a, unsigned i)
{ (void)i; return be16toh(((const mh_t *)a)->class_specific) >> 8; }
static void set_mh_cs_hi(void *a, unsigned i, uint64_t v)
{
	mh_t *h = a;
	(void)i;
	h->class_specific = htobe16((uint16_t)((be16toh(h->class_specific) & 0xff) | (v & 0xff) << 8));
}
static uint64_t get_mh_cs_lo(const void *a, unsigned i)
{ (void)i; return be16toh(((const mh_t *)a)->class_specific) & 0xff; }
static void set_mh_cs_lo(void *a, unsigned i, uint64_t v)
{
	mh_t *h = a;
	(void)i;
	h->class_specific = htobe16((uint16_t)((be16toh(h->class_specific) & 0xff00) | (v & 0xff)));
}

static struct field mad_hdr_fields[] = {
	FLD(IB_MAD_BASEVER_F,	8,  0x41, mh_base),
	FLD(IB_MAD_MGMTCLASS_F,	8,  0x42, mh_class),
	FLD(IB_MAD_CLASSVER_F,	8,  0x43, mh_classver),
	FLD(IB_MAD_METHOD_F,	7,  0x14, mh_method),
	FLD(IB_MAD_RESPONSE_F,	1,  1,    mh_resp),
	FLD(IB_MAD_STATUS_F,	16, 0x1c05, mh_status),
	FLD(IB_DRSMP_HOPPTR_F,	8,  0x3e, mh_cs_hi),
	FLD(IB_DRSMP_HOPCNT_F,	8,  0x27, mh_cs_lo),
	FLD(IB_MAD_TRID_F,	64, 0x0123456789abcdefull, mh_tid),
	FLD(IB_MAD_ATTRID_F,	16, 0xa5b6, mh_attr),
	FLD(IB_MAD_ATTRMOD_F,	32, 0x8a9bacbd, mh_mod),
};

/* ------------------------------------------------------------------ */
/* LID-routed SMP (14.2.1.1)                                            */
/* ------------------------------------------------------------------ */

typedef struct smp_lid sl_t;
DEF_BE(sl_mkey, sl_t, mkey, 64)

static struct field smp_lid_fields[] = {
	FLD(IB_MAD_BASEVER_F,	8,  0x01, mh_base),
	FLD(IB_MAD_MGMTCLASS_F,	8,  0x01, mh_class),
	FLD(IB_MAD_METHOD_F,	7,  0x02, mh_method),
	FLD(IB_MAD_TRID_F,	64, 0xfedcba9876543210ull, mh_tid),
	FLD(IB_MAD_ATTRID_F,	16, 0x0015, mh_attr),
	FLD(IB_MAD_ATTRMOD_F,	32, 0x00000007, mh_mod),
	FLD(IB_MAD_MKEY_F,	64, 0x1122334455667788ull, sl_mkey),
};

/* ------------------------------------------------------------------ */
/* Directed-route SMP (14.2.1.2)                                        */
/* ------------------------------------------------------------------ */

typedef struct smp_dr sd_t;
static uint64_t get_sd_dir(const void *a, unsigned i)
{ (void)i; return (be16toh(((const sd_t *)a)->hdr.status) & SMP_DR_DIRECTION) != 0; }
static void set_sd_dir(void *a, unsigned i, uint64_t v)
{
	sd_t *s = a;
	uint16_t st = be16toh(s->hdr.status);
	(void)i;
	st = (uint16_t)(v & 1 ? st | SMP_DR_DIRECTION : st & ~SMP_DR_DIRECTION);
	s->hdr.status = htobe16(st);
}
static uint64_t get_sd_status(const void *a, unsigned i)
{ (void)i; return be16toh(((const sd_t *)a)->hdr.status) & 0x7fff; }
static void set_sd_status(void *a, unsigned i, uint64_t v)
{
	sd_t *s = a;
	(void)i;
	s->hdr.status = htobe16((uint16_t)((be16toh(s->hdr.status) & SMP_DR_DIRECTION) | (v & 0x7fff)));
}
/* libibmad's DrSmpStatus is 16 bits wide and covers the D bit: keep D. */
static void lset_dr_status(uint8_t *mad, int offs, enum MAD_FIELDS f, uint64_t v)
{
	uint32_t d = mad_get_field(mad, offs, IB_DRSMP_DIRECTION_F);

	mad_set_field(mad, offs, f, (uint32_t)v);
	mad_set_field(mad, offs, IB_DRSMP_DIRECTION_F, d);
}
static uint64_t get_sd_hop_ptr(const void *a, unsigned i)
{ (void)i; return smp_dr_hop_ptr(a); }
static void set_sd_hop_ptr(void *a, unsigned i, uint64_t v)
{ (void)i; smp_dr_set_hops(a, (uint8_t)v, smp_dr_hop_cnt(a)); }
static uint64_t get_sd_hop_cnt(const void *a, unsigned i)
{ (void)i; return smp_dr_hop_cnt(a); }
static void set_sd_hop_cnt(void *a, unsigned i, uint64_t v)
{ (void)i; smp_dr_set_hops(a, smp_dr_hop_ptr(a), (uint8_t)v); }
DEF_BE(sd_mkey, sd_t, mkey, 64)
DEF_BE(sd_slid, sd_t, dr_slid, 16)
DEF_BE(sd_dlid, sd_t, dr_dlid, 16)

static struct field smp_dr_fields[] = {
	FLD(IB_MAD_BASEVER_F,	8,  0x01, mh_base),
	FLD(IB_MAD_MGMTCLASS_F,	8,  0x81, mh_class),
	FLD(IB_MAD_METHOD_F,	7,  0x01, mh_method),
	FLD(IB_MAD_RESPONSE_F,	1,  1,    mh_resp),
	FLD(IB_DRSMP_DIRECTION_F, 1, 1,   sd_dir),
	FLDX(IB_DRSMP_STATUS_F,	15, 0x1c, sd_status, lset_dr_status),
	FLD(IB_DRSMP_HOPPTR_F,	8,  0x05, sd_hop_ptr),
	FLD(IB_DRSMP_HOPCNT_F,	8,  0x3f, sd_hop_cnt),
	FLD(IB_MAD_TRID_F,	64, 0x00000000c0ffee01ull, mh_tid),
	FLD(IB_MAD_ATTRID_F,	16, 0x0011, mh_attr),
	FLD(IB_MAD_ATTRMOD_F,	32, 0x000000a3, mh_mod),
	FLD(IB_MAD_MKEY_F,	64, 0x8877665544332211ull, sd_mkey),
	FLD(IB_DRSMP_DRSLID_F,	16, 0x1357, sd_slid),
	FLD(IB_DRSMP_DRDLID_F,	16, 0x2468, sd_dlid),
};

/* ------------------------------------------------------------------ */
/* SA MAD with RMPP header (15.2.1, 13.6.2.1)                           */
/* ------------------------------------------------------------------ */

typedef struct sa_mad sa_t;
DEF_U8(sa_rmpp_ver, sa_t, rmpp.version)
DEF_U8(sa_rmpp_type, sa_t, rmpp.type)
DEF_BITS(sa_rmpp_resp, sa_t, rmpp.resptime_flags, 3, 5)
DEF_BITS(sa_rmpp_flags, sa_t, rmpp.resptime_flags, 0, 3)
DEF_U8(sa_rmpp_status, sa_t, rmpp.status)
DEF_BE(sa_rmpp_d1, sa_t, rmpp.data1, 32)
DEF_BE(sa_rmpp_d2, sa_t, rmpp.data2, 32)
DEF_BE(sa_smkey, sa_t, sm_key, 64)
DEF_BE(sa_attr_off, sa_t, attr_offset, 16)
DEF_BE(sa_comp_mask, sa_t, comp_mask, 64)

static struct field sa_fields[] = {
	FLD(IB_MAD_BASEVER_F,	8,  0x01, mh_base),
	FLD(IB_MAD_MGMTCLASS_F,	8,  0x03, mh_class),
	FLD(IB_MAD_CLASSVER_F,	8,  0x02, mh_classver),
	FLD(IB_MAD_METHOD_F,	7,  0x12, mh_method),
	FLD(IB_MAD_STATUS_F,	16, 0x0c00, mh_status),
	FLD(IB_MAD_TRID_F,	64, 0x1020304050607080ull, mh_tid),
	FLD(IB_MAD_ATTRID_F,	16, 0x0035, mh_attr),
	FLD(IB_SA_RMPP_VERS_F,	8,  0x51, sa_rmpp_ver),
	FLD(IB_SA_RMPP_TYPE_F,	8,  0x52, sa_rmpp_type),
	FLD(IB_SA_RMPP_RESP_F,	5,  0x13, sa_rmpp_resp),
	FLD(IB_SA_RMPP_FLAGS_F,	3,  0x5,  sa_rmpp_flags),
	FLD(IB_SA_RMPP_STATUS_F, 8, 0x53, sa_rmpp_status),
	FLD(IB_SA_RMPP_SEGNUM_F, 32, 0x01020304, sa_rmpp_d1),
	FLD(IB_SA_RMPP_LEN_F,	32, 0x0a0b0c0d, sa_rmpp_d2),
	FLD(IB_SA_MKEY_F,	64, 0x1122334455667788ull, sa_smkey),
	FLD(IB_SA_ATTROFFS_F,	16, 0x99aa, sa_attr_off),
	FLD(IB_SA_COMPMASK_F,	64, 0x0fedcba987654321ull, sa_comp_mask),
};

/* ------------------------------------------------------------------ */
/* NodeInfo (14.2.5.3)                                                  */
/* ------------------------------------------------------------------ */

typedef struct smp_node_info ni_t;
DEF_U8(ni_base, ni_t, base_version)
DEF_U8(ni_classver, ni_t, class_version)
DEF_U8(ni_type, ni_t, node_type)
DEF_U8(ni_nports, ni_t, num_ports)
DEF_BE(ni_sys_guid, ni_t, sys_guid, 64)
DEF_BE(ni_node_guid, ni_t, node_guid, 64)
DEF_BE(ni_port_guid, ni_t, port_guid, 64)
DEF_BE(ni_pcap, ni_t, partition_cap, 16)
DEF_BE(ni_devid, ni_t, device_id, 16)
DEF_BE(ni_rev, ni_t, revision, 32)
DEF_U8(ni_lport, ni_t, local_port)
static uint64_t get_ni_vendor(const void *a, unsigned i)
{ (void)i; return smp_node_info_vendor(a); }
static void set_ni_vendor(void *a, unsigned i, uint64_t v)
{
	ni_t *n = a;
	(void)i;
	n->vendor_id[0] = (uint8_t)(v >> 16);
	n->vendor_id[1] = (uint8_t)(v >> 8);
	n->vendor_id[2] = (uint8_t)v;
}

static struct field node_info_fields[] = {
	FLD(IB_NODE_BASE_VERS_F,	8,  0x31, ni_base),
	FLD(IB_NODE_CLASS_VERS_F,	8,  0x32, ni_classver),
	FLD(IB_NODE_TYPE_F,		8,  0x33, ni_type),
	FLD(IB_NODE_NPORTS_F,		8,  0x24, ni_nports),
	FLD(IB_NODE_SYSTEM_GUID_F,	64, 0x0002c90300a1b2c3ull, ni_sys_guid),
	FLD(IB_NODE_GUID_F,		64, 0x0002c90300d4e5f6ull, ni_node_guid),
	FLD(IB_NODE_PORT_GUID_F,	64, 0x0002c90300778899ull, ni_port_guid),
	FLD(IB_NODE_PARTITION_CAP_F,	16, 0x1f40, ni_pcap),
	FLD(IB_NODE_DEVID_F,		16, 0xcafe, ni_devid),
	FLD(IB_NODE_REVISION_F,		32, 0xa0b0c0d0, ni_rev),
	FLD(IB_NODE_LOCAL_PORT_F,	8,  0x11, ni_lport),
	FLD(IB_NODE_VENDORID_F,		24, 0x02c903, ni_vendor),
};

/* ------------------------------------------------------------------ */
/* SwitchInfo (14.2.5.4)                                                */
/* ------------------------------------------------------------------ */

typedef struct smp_switch_info si_t;
DEF_BE(si_lft_cap, si_t, lft_cap, 16)
DEF_BE(si_rft_cap, si_t, rft_cap, 16)
DEF_BE(si_mft_cap, si_t, mft_cap, 16)
DEF_BE(si_lft_top, si_t, lft_top, 16)
DEF_U8(si_def_port, si_t, default_port)
DEF_U8(si_def_mprim, si_t, default_mcast_primary_port)
DEF_U8(si_def_mnprim, si_t, default_mcast_not_primary_port)
DEF_BE(si_lids_pp, si_t, lids_per_port, 16)
DEF_BE(si_penf_cap, si_t, partition_enf_cap, 16)
DEF_BITS(si_inb, si_t, enf_caps, 7, 1)
DEF_BITS(si_outb, si_t, enf_caps, 6, 1)
DEF_BITS(si_fri, si_t, enf_caps, 5, 1)
DEF_BITS(si_fro, si_t, enf_caps, 4, 1)
DEF_BE(si_mft_top, si_t, mft_top, 16)
DEF_BITS(si_osl, si_t, life_psc_osl, 0, 2)
/* wire.h getters; setters from the documented bit positions */
static uint64_t get_si_life(const void *a, unsigned i)
{ (void)i; return smp_switch_info_life(a); }
static void set_si_life(void *a, unsigned i, uint64_t v)
{
	si_t *s = a;
	(void)i;
	s->life_psc_osl = (uint8_t)((s->life_psc_osl & 0x07) | (v & 0x1f) << 3);
}
static uint64_t get_si_psc(const void *a, unsigned i)
{ (void)i; return smp_switch_info_psc(a); }
static void set_si_psc(void *a, unsigned i, uint64_t v)
{
	si_t *s = a;
	(void)i;
	s->life_psc_osl = (uint8_t)((s->life_psc_osl & ~0x04u) | (v & 1) << 2);
}
static uint64_t get_si_ep0(const void *a, unsigned i)
{ (void)i; return smp_switch_info_enhanced_port0(a); }
static void set_si_ep0(void *a, unsigned i, uint64_t v)
{
	si_t *s = a;
	(void)i;
	s->enf_caps = (uint8_t)((s->enf_caps & ~0x08u) | (v & 1) << 3);
}

static struct field switch_info_fields[] = {
	FLD(IB_SW_LINEAR_FDB_CAP_F,	16, 0xc000, si_lft_cap),
	FLD(IB_SW_RANDOM_FDB_CAP_F,	16, 0x0123, si_rft_cap),
	FLD(IB_SW_MCAST_FDB_CAP_F,	16, 0x0400, si_mft_cap),
	FLD(IB_SW_LINEAR_FDB_TOP_F,	16, 0x0bcd, si_lft_top),
	FLD(IB_SW_DEF_PORT_F,		8,  0x05, si_def_port),
	FLD(IB_SW_DEF_MCAST_PRIM_F,	8,  0x07, si_def_mprim),
	FLD(IB_SW_DEF_MCAST_NOT_PRIM_F,	8,  0x09, si_def_mnprim),
	FLD(IB_SW_LIFE_TIME_F,		5,  0x13, si_life),
	FLD(IB_SW_STATE_CHANGE_F,	1,  1,    si_psc),
	FLD(IB_SW_OPT_SLTOVL_MAPPING_F,	2,  0x2,  si_osl),
	FLD(IB_SW_LIDS_PER_PORT_F,	16, 0x1122, si_lids_pp),
	FLD(IB_SW_PARTITION_ENFORCE_CAP_F, 16, 0x3344, si_penf_cap),
	FLD(IB_SW_PARTITION_ENF_INB_F,	1,  1, si_inb),
	FLD(IB_SW_PARTITION_ENF_OUTB_F,	1,  0, si_outb),
	FLD(IB_SW_FILTER_RAW_INB_F,	1,  0, si_fri),
	FLD(IB_SW_FILTER_RAW_OUTB_F,	1,  1, si_fro),
	FLD(IB_SW_ENHANCED_PORT0_F,	1,  1, si_ep0),
	FLD(IB_SW_MCAST_FDB_TOP_F,	16, 0xc0ff, si_mft_top),
};

/* ------------------------------------------------------------------ */
/* PortInfo (14.2.5.6): every field                                     */
/* ------------------------------------------------------------------ */

typedef struct smp_port_info pi_t;
DEF_BE(pi_mkey, pi_t, mkey, 64)
DEF_BE(pi_gid_prefix, pi_t, gid_prefix, 64)
DEF_BE(pi_lid, pi_t, lid, 16)
DEF_BE(pi_sm_lid, pi_t, master_sm_lid, 16)
DEF_BE(pi_cap_mask, pi_t, cap_mask, 32)
DEF_BE(pi_diag, pi_t, diag_code, 16)
DEF_BE(pi_lease, pi_t, mkey_lease_period, 16)
DEF_U8(pi_local_port, pi_t, local_port)
DEF_U8(pi_lwe, pi_t, link_width_enabled)
DEF_U8(pi_lws, pi_t, link_width_supported)
DEF_U8(pi_lwa, pi_t, link_width_active)
DEF_ACC_HI4(pi_speed_supp, pi_t, pi_speed_supported, speed_supported_state)
DEF_ACC(pi_state, pi_t, pi_port_state, pi_set_port_state)
DEF_ACC(pi_phys, pi_t, pi_phys_state, pi_set_phys_state)
DEF_LO4(pi_down_def, pi_t, phys_state_down_def)
DEF_BITS(pi_mkey_prot, pi_t, mkey_prot_lmc, 6, 2)
DEF_ACC(pi_lmc_f, pi_t, pi_lmc, pi_set_lmc)
DEF_ACC_HI4(pi_speed_act, pi_t, pi_speed_active, speed_active_enabled)
DEF_ACC_LO4(pi_speed_en, pi_t, pi_speed_enabled, speed_active_enabled)
DEF_ACC(pi_nmtu, pi_t, pi_neighbor_mtu, pi_set_neighbor_mtu)
DEF_ACC_LO4(pi_smsl, pi_t, pi_sm_sl, neighbor_mtu_sm_sl)
DEF_ACC_HI4(pi_vlcap, pi_t, pi_vl_cap, vl_cap_init_type)
DEF_LO4(pi_init_type, pi_t, vl_cap_init_type)
DEF_U8(pi_vl_high_limit, pi_t, vl_high_limit)
DEF_U8(pi_vl_arb_high, pi_t, vl_arb_high_cap)
DEF_U8(pi_vl_arb_low, pi_t, vl_arb_low_cap)
DEF_HI4(pi_init_reply, pi_t, init_type_reply_mtu_cap)
DEF_ACC_LO4(pi_mtucap, pi_t, pi_mtu_cap, init_type_reply_mtu_cap)
DEF_BITS(pi_vl_stall, pi_t, vl_stall_hoq_life, 5, 3)
DEF_BITS(pi_hoq, pi_t, vl_stall_hoq_life, 0, 5)
DEF_ACC(pi_opvls, pi_t, pi_op_vls, pi_set_op_vls)
DEF_BITS(pi_pe_inb, pi_t, op_vls_enforce, 3, 1)
DEF_BITS(pi_pe_outb, pi_t, op_vls_enforce, 2, 1)
DEF_BITS(pi_fr_inb, pi_t, op_vls_enforce, 1, 1)
DEF_BITS(pi_fr_outb, pi_t, op_vls_enforce, 0, 1)
DEF_BE(pi_mkey_viol, pi_t, mkey_violations, 16)
DEF_BE(pi_pkey_viol, pi_t, pkey_violations, 16)
DEF_BE(pi_qkey_viol, pi_t, qkey_violations, 16)
DEF_U8(pi_guid_cap, pi_t, guid_cap)
DEF_ACC(pi_rereg, pi_t, pi_client_rereg, pi_set_client_rereg)
DEF_BITS(pi_mcast_supp, pi_t, rereg_subnet_timeout, 5, 2)
DEF_ACC(pi_subn_to, pi_t, pi_subnet_timeout, pi_set_subnet_timeout)
DEF_BITS(pi_resp_time, pi_t, resp_time_value, 0, 5)
DEF_HI4(pi_phy_err, pi_t, phy_overrun_errors)
DEF_LO4(pi_overrun, pi_t, phy_overrun_errors)
DEF_BE(pi_credit_hint, pi_t, max_credit_hint, 16)
static uint64_t get_pi_rtl(const void *a, unsigned i)
{
	const pi_t *p = a;
	(void)i;
	return (uint64_t)p->link_roundtrip_latency[1] << 16 |
	       p->link_roundtrip_latency[2] << 8 | p->link_roundtrip_latency[3];
}
static void set_pi_rtl(void *a, unsigned i, uint64_t v)
{
	pi_t *p = a;
	(void)i;
	p->link_roundtrip_latency[1] = (uint8_t)(v >> 16);
	p->link_roundtrip_latency[2] = (uint8_t)(v >> 8);
	p->link_roundtrip_latency[3] = (uint8_t)v;
}
DEF_BE(pi_cap_mask2, pi_t, cap_mask2, 16)
DEF_ACC_HI4(pi_sext_act, pi_t, pi_speed_ext_active, speed_ext_active_supp)
DEF_LO4(pi_sext_supp, pi_t, speed_ext_active_supp)
DEF_BITS(pi_sext_en, pi_t, speed_ext_enabled, 0, 5)

static struct field port_info_fields[] = {
	FLD(IB_PORT_MKEY_F,			64, 0x0123456789abcdefull, pi_mkey),
	FLD(IB_PORT_GID_PREFIX_F,		64, 0xfe800000a1b2c3d4ull, pi_gid_prefix),
	FLD(IB_PORT_LID_F,			16, 0x1234, pi_lid),
	FLD(IB_PORT_SMLID_F,			16, 0x5678, pi_sm_lid),
	FLD(IB_PORT_CAPMASK_F,			32, 0x9abcdef1, pi_cap_mask),
	FLD(IB_PORT_DIAG_F,			16, 0x2345, pi_diag),
	FLD(IB_PORT_MKEY_LEASE_F,		16, 0x6789, pi_lease),
	FLD(IB_PORT_LOCAL_PORT_F,		8,  0x24, pi_local_port),
	FLD(IB_PORT_LINK_WIDTH_ENABLED_F,	8,  0x0b, pi_lwe),
	FLD(IB_PORT_LINK_WIDTH_SUPPORTED_F,	8,  0x17, pi_lws),
	FLD(IB_PORT_LINK_WIDTH_ACTIVE_F,	8,  0x02, pi_lwa),
	FLD(IB_PORT_LINK_SPEED_SUPPORTED_F,	4,  0x7, pi_speed_supp),
	FLD(IB_PORT_STATE_F,			4,  0x4, pi_state),
	FLD(IB_PORT_PHYS_STATE_F,		4,  0x5, pi_phys),
	FLD(IB_PORT_LINK_DOWN_DEF_F,		4,  0x2, pi_down_def),
	FLD(IB_PORT_MKEY_PROT_BITS_F,		2,  0x2, pi_mkey_prot),
	FLD(IB_PORT_LMC_F,			3,  0x5, pi_lmc_f),
	FLD(IB_PORT_LINK_SPEED_ACTIVE_F,	4,  0x2, pi_speed_act),
	FLD(IB_PORT_LINK_SPEED_ENABLED_F,	4,  0x7, pi_speed_en),
	FLD(IB_PORT_NEIGHBOR_MTU_F,		4,  0x5, pi_nmtu),
	FLD(IB_PORT_SMSL_F,			4,  0xa, pi_smsl),
	FLD(IB_PORT_VL_CAP_F,			4,  0x4, pi_vlcap),
	FLD(IB_PORT_INIT_TYPE_F,		4,  0x3, pi_init_type),
	FLD(IB_PORT_VL_HIGH_LIMIT_F,		8,  0x61, pi_vl_high_limit),
	FLD(IB_PORT_VL_ARBITRATION_HIGH_CAP_F,	8,  0x62, pi_vl_arb_high),
	FLD(IB_PORT_VL_ARBITRATION_LOW_CAP_F,	8,  0x63, pi_vl_arb_low),
	FLD(IB_PORT_INIT_TYPE_REPLY_F,		4,  0x9, pi_init_reply),
	FLD(IB_PORT_MTU_CAP_F,			4,  0x4, pi_mtucap),
	FLD(IB_PORT_VL_STALL_COUNT_F,		3,  0x6, pi_vl_stall),
	FLD(IB_PORT_HOQ_LIFE_F,			5,  0x13, pi_hoq),
	FLD(IB_PORT_OPER_VLS_F,			4,  0x3, pi_opvls),
	FLD(IB_PORT_PART_EN_INB_F,		1,  1, pi_pe_inb),
	FLD(IB_PORT_PART_EN_OUTB_F,		1,  0, pi_pe_outb),
	FLD(IB_PORT_FILTER_RAW_INB_F,		1,  0, pi_fr_inb),
	FLD(IB_PORT_FILTER_RAW_OUTB_F,		1,  1, pi_fr_outb),
	FLD(IB_PORT_MKEY_VIOL_F,		16, 0x3456, pi_mkey_viol),
	FLD(IB_PORT_PKEY_VIOL_F,		16, 0x789a, pi_pkey_viol),
	FLD(IB_PORT_QKEY_VIOL_F,		16, 0xbcde, pi_qkey_viol),
	FLD(IB_PORT_GUID_CAP_F,			8,  0x20, pi_guid_cap),
	FLD(IB_PORT_CLIENT_REREG_F,		1,  1, pi_rereg),
	FLD(IB_PORT_MCAST_PKEY_SUPR_ENAB_F,	2,  0x2, pi_mcast_supp),
	FLD(IB_PORT_SUBN_TIMEOUT_F,		5,  0x12, pi_subn_to),
	FLD(IB_PORT_RESP_TIME_VAL_F,		5,  0x11, pi_resp_time),
	FLD(IB_PORT_LOCAL_PHYS_ERR_F,		4,  0x8, pi_phy_err),
	FLD(IB_PORT_OVERRUN_ERR_F,		4,  0x6, pi_overrun),
	FLD(IB_PORT_MAX_CREDIT_HINT_F,		16, 0x4567, pi_credit_hint),
	FLD(IB_PORT_LINK_ROUND_TRIP_F,		24, 0xabcdef, pi_rtl),
	FLD(IB_PORT_CAPMASK2_F,			16, 0x0e3a, pi_cap_mask2),
	FLD(IB_PORT_LINK_SPEED_EXT_ACTIVE_F,	4,  0x2, pi_sext_act),
	FLD(IB_PORT_LINK_SPEED_EXT_SUPPORTED_F,	4,  0x5, pi_sext_supp),
	FLD(IB_PORT_LINK_SPEED_EXT_ENABLED_F,	5,  0x1e, pi_sext_en),
};

/* ------------------------------------------------------------------ */
/* SMInfo (14.2.5.13)                                                   */
/* ------------------------------------------------------------------ */

typedef struct smp_sm_info sm_t;
DEF_BE(sm_guid, sm_t, guid, 64)
DEF_BE(sm_key, sm_t, sm_key, 64)
DEF_BE(sm_act, sm_t, act_count, 32)
DEF_HI4(sm_prio, sm_t, prio_state)
DEF_LO4(sm_state, sm_t, prio_state)

static struct field sm_info_fields[] = {
	FLD(IB_SMINFO_GUID_F,	64, 0x0002c903000abcdeull, sm_guid),
	FLD(IB_SMINFO_KEY_F,	64, 0x5a5a5a5a12345678ull, sm_key),
	FLD(IB_SMINFO_ACT_F,	32, 0x76543210, sm_act),
	FLD(IB_SMINFO_PRIO_F,	4,  0xd, sm_prio),
	FLD(IB_SMINFO_STATE_F,	4,  SM_STATE_MASTER, sm_state),
};

/* ------------------------------------------------------------------ */
/* Notice (14.2.5.1, 13.4.8.2)                                          */
/* ------------------------------------------------------------------ */

typedef struct smp_notice no_t;
static uint64_t get_no_generic(const void *a, unsigned i)
{ (void)i; return notice_is_generic(a); }
static void set_no_generic(void *a, unsigned i, uint64_t v)
{
	no_t *n = a;
	(void)i;
	n->generic_type = (uint8_t)((n->generic_type & 0x7f) | (v & 1) << 7);
}
static uint64_t get_no_type(const void *a, unsigned i)
{ (void)i; return notice_type(a); }
static void set_no_type(void *a, unsigned i, uint64_t v)
{
	no_t *n = a;
	(void)i;
	n->generic_type = (uint8_t)((n->generic_type & 0x80) | (v & 0x7f));
}
static uint64_t get_no_producer(const void *a, unsigned i)
{ (void)i; return notice_producer(a); }
static void set_no_producer(void *a, unsigned i, uint64_t v)
{
	no_t *n = a;
	(void)i;
	n->producer[0] = (uint8_t)(v >> 16);
	n->producer[1] = (uint8_t)(v >> 8);
	n->producer[2] = (uint8_t)v;
}
DEF_BE(no_trap, no_t, trap_num, 16)
DEF_BE(no_issuer, no_t, issuer_lid, 16)
static uint64_t get_no_toggle(const void *a, unsigned i)
{ (void)i; return be16toh(((const no_t *)a)->toggle_count) >> 15; }
static void set_no_toggle(void *a, unsigned i, uint64_t v)
{
	no_t *n = a;
	(void)i;
	n->toggle_count = htobe16((uint16_t)((be16toh(n->toggle_count) & 0x7fff) | (v & 1) << 15));
}
static uint64_t get_no_count(const void *a, unsigned i)
{ (void)i; return be16toh(((const no_t *)a)->toggle_count) & 0x7fff; }
static void set_no_count(void *a, unsigned i, uint64_t v)
{
	no_t *n = a;
	(void)i;
	n->toggle_count = htobe16((uint16_t)((be16toh(n->toggle_count) & 0x8000) | (v & 0x7fff)));
}
/* libibmad's NoticeCount is 16 bits wide and covers the toggle: keep it. */
static void lset_no_count(uint8_t *mad, int offs, enum MAD_FIELDS f, uint64_t v)
{
	uint32_t t = mad_get_field(mad, offs, IB_NOTICE_TOGGLE_F);

	mad_set_field(mad, offs, f, (uint32_t)v);
	mad_set_field(mad, offs, IB_NOTICE_TOGGLE_F, t);
}
/* DataDetails as libibmad sees it (trap 128: LID; trap 144: LID, CapMask) */
static uint64_t dd_be(const no_t *n, unsigned at, unsigned len)
{
	uint64_t v = 0;

	for (unsigned k = 0; k < len; k++)
		v = v << 8 | n->data_details[at + k];
	return v;
}
static void dd_set_be(no_t *n, unsigned at, unsigned len, uint64_t v)
{
	for (unsigned k = len; k-- > 0; v >>= 8)
		n->data_details[at + k] = (uint8_t)v;
}
static uint64_t get_no_dlid(const void *a, unsigned i)
{ (void)i; return dd_be(a, 0, 2); }
static void set_no_dlid(void *a, unsigned i, uint64_t v)
{ (void)i; dd_set_be(a, 0, 2, v); }
static uint64_t get_no_144lid(const void *a, unsigned i)
{ (void)i; return dd_be(a, 2, 2); }
static void set_no_144lid(void *a, unsigned i, uint64_t v)
{ (void)i; dd_set_be(a, 2, 2, v); }
static uint64_t get_no_144cap(const void *a, unsigned i)
{ (void)i; return dd_be(a, 6, 4); }
static void set_no_144cap(void *a, unsigned i, uint64_t v)
{ (void)i; dd_set_be(a, 6, 4, v); }
static uint64_t get_no_gid_pfx(const void *a, unsigned i)
{
	uint64_t v;
	(void)i;
	memcpy(&v, ((const no_t *)a)->issuer_gid, 8);
	return be64toh(v);
}
static void set_no_gid_pfx(void *a, unsigned i, uint64_t v)
{
	(void)i;
	v = htobe64(v);
	memcpy(((no_t *)a)->issuer_gid, &v, 8);
}
static uint64_t get_no_gid_guid(const void *a, unsigned i)
{
	uint64_t v;
	(void)i;
	memcpy(&v, ((const no_t *)a)->issuer_gid + 8, 8);
	return be64toh(v);
}
static void set_no_gid_guid(void *a, unsigned i, uint64_t v)
{
	(void)i;
	v = htobe64(v);
	memcpy(((no_t *)a)->issuer_gid + 8, &v, 8);
}

static struct field notice_fields[] = {
	FLD(IB_NOTICE_IS_GENERIC_F,	1,  1,    no_generic),
	FLD(IB_NOTICE_TYPE_F,		7,  0x43, no_type),
	FLD(IB_NOTICE_PRODUCER_F,	24, 0x0a0b0c, no_producer),
	FLD(IB_NOTICE_TRAP_NUMBER_F,	16, 0x0090, no_trap),
	FLD(IB_NOTICE_ISSUER_LID_F,	16, 0x3579, no_issuer),
	FLD(IB_NOTICE_TOGGLE_F,		1,  1,    no_toggle),
	FLDX(IB_NOTICE_COUNT_F,		15, 0x2bcd, no_count, lset_no_count),
	FLD(IB_NOTICE_DATA_LID_F,	16, 0x4680, no_dlid),
	FLD(IB_NOTICE_DATA_144_LID_F,	16, 0x1a2b, no_144lid),
	FLD(IB_NOTICE_DATA_144_CAPMASK_F, 32, 0x8badf00d, no_144cap),
	{ "no_gid_prefix", IB_GID_PREFIX_F, 64, 64, 0, 0xfe80000000000000ull,
	  get_no_gid_pfx, set_no_gid_pfx, NULL },
	{ "no_gid_guid", IB_GID_GUID_F, 64, 64, 0, 0x0002c90300fedcbaull,
	  get_no_gid_guid, set_no_gid_guid, NULL },
};

/* ------------------------------------------------------------------ */
/* Tables of entries, filled in at start-up                             */
/* ------------------------------------------------------------------ */

/* GUIDInfo (14.2.5.5): IB_GI_GUID0_F .. IB_GI_GUID7_F */
static uint64_t get_gi(const void *a, unsigned i)
{ return be64toh(((const struct smp_guid_info *)a)->guid[i]); }
static void set_gi(void *a, unsigned i, uint64_t v)
{ ((struct smp_guid_info *)a)->guid[i] = htobe64(v); }
static struct field guid_info_fields[8];

/*
 * libibmad has no per-entry fields for P_Key, LFT, MFT and VLArbitration
 * blocks.  Its generic encoders are used at the entry's offset instead.
 * libibmad addresses bytes within big-endian 32-bit words (p[3 ^ idx]), so
 * a base offset handed to it must be a multiple of 4: each entry uses a
 * field at its own position modulo 4.
 *
 *   16-bit at byte 0 / 2:	SwitchInfo LinearFDBCap / RandomFDBCap
 *   8-bit at byte 0..3:	NodeInfo BaseVersion, ClassVersion, NodeType,
 *				NumPorts
 *   low nibble at 0 / 2:	PortInfo PortState (byte 32) /
 *				LinkSpeedExtSupported (byte 62)
 */
static const enum MAD_FIELDS be16_at[2] = {
	IB_SW_LINEAR_FDB_CAP_F, IB_SW_RANDOM_FDB_CAP_F,
};
static const enum MAD_FIELDS u8_at[4] = {
	IB_NODE_BASE_VERS_F, IB_NODE_CLASS_VERS_F, IB_NODE_TYPE_F, IB_NODE_NPORTS_F,
};

static uint64_t get_pkey(const void *a, unsigned i)
{ return be16toh(((const struct smp_pkey_table *)a)->pkey[i]); }
static void set_pkey(void *a, unsigned i, uint64_t v)
{ ((struct smp_pkey_table *)a)->pkey[i] = htobe16((uint16_t)v); }
static struct field pkey_fields[32];

static uint64_t get_lft(const void *a, unsigned i)
{ return ((const struct smp_lft_block *)a)->port[i]; }
static void set_lft(void *a, unsigned i, uint64_t v)
{ ((struct smp_lft_block *)a)->port[i] = (uint8_t)v; }
static struct field lft_fields[64];

static uint64_t get_mft(const void *a, unsigned i)
{ return be16toh(((const struct smp_mft_block *)a)->mask[i]); }
static void set_mft(void *a, unsigned i, uint64_t v)
{ ((struct smp_mft_block *)a)->mask[i] = htobe16((uint16_t)v); }
static struct field mft_fields[32];

static uint64_t get_vla_vl(const void *a, unsigned i)
{ return LO4(((const struct smp_vl_arb_table *)a)->entry[i].vl); }
static void set_vla_vl(void *a, unsigned i, uint64_t v)
{ SET_LO4(((struct smp_vl_arb_table *)a)->entry[i].vl, (unsigned)v); }
static uint64_t get_vla_w(const void *a, unsigned i)
{ return ((const struct smp_vl_arb_table *)a)->entry[i].weight; }
static void set_vla_w(void *a, unsigned i, uint64_t v)
{ ((struct smp_vl_arb_table *)a)->entry[i].weight = (uint8_t)v; }
static struct field vl_arb_fields[64];

/*
 * SLtoVL: libibmad knows the table as one 64-bit big-endian field; SL n is
 * the nibble 60 - 4n of it (SL0 the most significant).
 */
static uint64_t get_sl2vl(const void *a, unsigned i)
{ return sl2vl_get(a, i); }
static void set_sl2vl(void *a, unsigned i, uint64_t v)
{ sl2vl_set(a, i, (unsigned)v); }
static void lset_sl2vl_nibble(uint8_t *mad, int offs, unsigned sl, uint64_t v)
{
	uint64_t t = mad_get_field64(mad, offs, IB_SLTOVL_MAPPING_TABLE_F);
	unsigned shift = 60 - 4 * sl;

	t = (t & ~(0xfull << shift)) | (v & 0xf) << shift;
	mad_set_field64(mad, offs, IB_SLTOVL_MAPPING_TABLE_F, t);
}
/* One libibmad setter per SL (the lset hook has no index). */
#define SL_LSET(n)								\
static void lset_sl##n(uint8_t *mad, int offs, enum MAD_FIELDS f, uint64_t v) \
{ (void)f; lset_sl2vl_nibble(mad, offs, n, v); }
SL_LSET(0) SL_LSET(1) SL_LSET(2) SL_LSET(3) SL_LSET(4) SL_LSET(5)
SL_LSET(6) SL_LSET(7) SL_LSET(8) SL_LSET(9) SL_LSET(10) SL_LSET(11)
SL_LSET(12) SL_LSET(13) SL_LSET(14) SL_LSET(15)
static const lset_fn sl_lsets[16] = {
	lset_sl0, lset_sl1, lset_sl2, lset_sl3, lset_sl4, lset_sl5,
	lset_sl6, lset_sl7, lset_sl8, lset_sl9, lset_sl10, lset_sl11,
	lset_sl12, lset_sl13, lset_sl14, lset_sl15,
};
static struct field sl2vl_fields[16];

static void fill(struct field *f, const char *name, unsigned i,
		 enum MAD_FIELDS fld, unsigned bits, int off, uint64_t val,
		 get_fn get, set_fn set, lset_fn lset)
{
	snprintf(f->name, sizeof(f->name), "%s[%u]", name, i);
	f->f = fld;
	f->bits = bits;
	f->off = off;
	f->idx = i;
	f->val = val;
	f->get = get;
	f->set = set;
	f->lset = lset;
}

static void init_tables(void)
{
	for (unsigned i = 0; i < 8; i++)
		fill(&guid_info_fields[i], "guid", i, (enum MAD_FIELDS)(IB_GI_GUID0_F + i),
		     64, 0, 0x0002c90300000001ull + 0x0101010101ull * i,
		     get_gi, set_gi, NULL);
	for (unsigned i = 0; i < 32; i++)
		fill(&pkey_fields[i], "pkey", i, be16_at[i % 2], 16,
		     (int)(2 * i - 2 * (i % 2)), (uint16_t)(0x8001 + 0x0203 * i), get_pkey,
		     set_pkey, NULL);
	for (unsigned i = 0; i < 64; i++)
		fill(&lft_fields[i], "port", i, u8_at[i % 4], 8, (int)(i - i % 4),
		     (uint8_t)(7 * i + 3), get_lft, set_lft, NULL);
	for (unsigned i = 0; i < 32; i++)
		fill(&mft_fields[i], "mask", i, be16_at[i % 2], 16,
		     (int)(2 * i - 2 * (i % 2)), (uint16_t)(0x8421 ^ (0x1357 * (i + 1))),
		     get_mft, set_mft, NULL);
	for (unsigned i = 0; i < 32; i++) {
		/* entry i: VL in the low nibble of byte 2i, weight byte 2i+1 */
		if (i % 2 == 0) {
			fill(&vl_arb_fields[2 * i], "vl", i, IB_PORT_STATE_F, 4,
			     (int)(2 * i) - 32, (5 * i + 3) & 0xf, get_vla_vl,
			     set_vla_vl, NULL);
			fill(&vl_arb_fields[2 * i + 1], "weight", i, u8_at[1], 8,
			     (int)(2 * i), (uint8_t)(37 * i + 11), get_vla_w,
			     set_vla_w, NULL);
		} else {
			fill(&vl_arb_fields[2 * i], "vl", i,
			     IB_PORT_LINK_SPEED_EXT_SUPPORTED_F, 4,
			     (int)(2 * i) - 62, (5 * i + 3) & 0xf, get_vla_vl,
			     set_vla_vl, NULL);
			fill(&vl_arb_fields[2 * i + 1], "weight", i, u8_at[3], 8,
			     (int)(2 * i) - 2, (uint8_t)(37 * i + 11), get_vla_w,
			     set_vla_w, NULL);
		}
	}
	for (unsigned i = 0; i < 16; i++)
		fill(&sl2vl_fields[i], "sl", i, IB_SLTOVL_MAPPING_TABLE_F, 4, 0,
		     (7 * i + 5) & 0xf, get_sl2vl, set_sl2vl, sl_lsets[i]);
}

#define ATTR(nm, base, t)	{ nm, base, t, NFIELDS(t) }
static const struct attr attrs[] = {
	ATTR("MAD header",	0,  mad_hdr_fields),
	ATTR("LID SMP",		0,  smp_lid_fields),
	ATTR("DR SMP",		0,  smp_dr_fields),
	ATTR("SA MAD",		0,  sa_fields),
	ATTR("NodeInfo",	64, node_info_fields),
	ATTR("SwitchInfo",	64, switch_info_fields),
	ATTR("PortInfo",	64, port_info_fields),
	ATTR("SMInfo",		64, sm_info_fields),
	ATTR("Notice",		64, notice_fields),
	ATTR("GUIDInfo",	64, guid_info_fields),
	ATTR("P_KeyTable",	64, pkey_fields),
	ATTR("LFT block",	64, lft_fields),
	ATTR("MFT block",	64, mft_fields),
	ATTR("VLArbitration",	64, vl_arb_fields),
	ATTR("SLtoVL",		64, sl2vl_fields),
};
#define N_ATTRS	(int)(sizeof(attrs) / sizeof(attrs[0]))

/* ------------------------------------------------------------------ */
/* The four generic tests                                              */
/* ------------------------------------------------------------------ */

static void lib_image_all(const struct attr *a, uint8_t *img, bool max)
{
	memset(img, 0, MAD_SIZE);
	for (unsigned k = 0; k < a->n; k++)
		lib_set(a, &a->f[k], img, max ? field_max(&a->f[k]) : a->f[k].val);
}

START_TEST(attr_decode)
{
	const struct attr *a = &attrs[_i];
	uint8_t img[MAD_SIZE];

	lib_image_all(a, img, false);
	for (unsigned k = 0; k < a->n; k++) {
		const struct field *f = &a->f[k];
		uint64_t got = our_get(a, f, img);

		ck_assert_msg(got == f->val,
			      "%s: %s reads 0x%llx, libibmad wrote 0x%llx",
			      a->name, f->name, (unsigned long long)got,
			      (unsigned long long)f->val);
		/* libibmad agrees with itself, or the table is wrong */
		if (!f->lset && f->bits <= 32)
			ck_assert_uint_eq(mad_get_field(img, a->base + f->off, f->f), f->val);
	}
}
END_TEST

START_TEST(attr_encode)
{
	const struct attr *a = &attrs[_i];
	uint8_t img[MAD_SIZE], ours[MAD_SIZE];

	lib_image_all(a, img, false);
	memset(ours, 0, sizeof(ours));
	for (unsigned k = 0; k < a->n; k++)
		our_set(a, &a->f[k], ours, a->f[k].val);
	assert_image(ours, img, MAD_SIZE, a->name, "(all)");
	/* and our own getters read back what our setters wrote */
	for (unsigned k = 0; k < a->n; k++)
		ck_assert_msg(our_get(a, &a->f[k], ours) == a->f[k].val,
			      "%s: %s does not read back", a->name, a->f[k].name);
}
END_TEST

START_TEST(attr_walk)
{
	const struct attr *a = &attrs[_i];
	uint8_t img[MAD_SIZE], ours[MAD_SIZE];

	for (unsigned j = 0; j < a->n; j++) {
		const struct field *fj = &a->f[j];
		uint64_t max = field_max(fj);

		memset(img, 0, sizeof(img));
		lib_set(a, fj, img, max);
		for (unsigned k = 0; k < a->n; k++) {
			uint64_t want = k == j ? max : 0;
			uint64_t got = our_get(a, &a->f[k], img);

			CHECK(got == want,
			      "%s: with only %s set to 0x%llx, %s reads 0x%llx (want 0x%llx)",
			      a->name, fj->name, (unsigned long long)max,
			      a->f[k].name, (unsigned long long)got,
			      (unsigned long long)want);
		}
		memset(ours, 0, sizeof(ours));
		our_set(a, fj, ours, max);
		assert_image(ours, img, MAD_SIZE, a->name, fj->name);
	}
}
END_TEST

START_TEST(attr_isolate)
{
	const struct attr *a = &attrs[_i];
	uint8_t all[MAD_SIZE], want[MAD_SIZE], ours[MAD_SIZE];

	lib_image_all(a, all, true);
	for (unsigned j = 0; j < a->n; j++) {
		memcpy(want, all, sizeof(want));
		lib_set(a, &a->f[j], want, 0);
		memcpy(ours, all, sizeof(ours));
		our_set(a, &a->f[j], ours, 0);
		assert_image(ours, want, MAD_SIZE, a->name, a->f[j].name);
		/* and back to the maximum */
		our_set(a, &a->f[j], ours, field_max(&a->f[j]));
		assert_image(ours, all, MAD_SIZE, a->name, a->f[j].name);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* Layout constants                                                     */
/* ------------------------------------------------------------------ */

START_TEST(layout_constants)
{
	ck_assert_int_eq(MAD_SIZE, IB_MAD_SIZE);
	ck_assert_int_eq(sizeof(struct smp_lid), IB_MAD_SIZE);
	ck_assert_int_eq(sizeof(struct smp_dr), IB_MAD_SIZE);
	ck_assert_int_eq(sizeof(struct sa_mad), IB_MAD_SIZE);
	ck_assert_int_eq(offsetof(struct smp_lid, data), IB_SMP_DATA_OFFS);
	ck_assert_int_eq(offsetof(struct smp_dr, data), IB_SMP_DATA_OFFS);
	ck_assert_int_eq(SMP_DATA_SIZE, IB_SMP_DATA_SIZE);
	ck_assert_int_eq(sizeof(((struct smp_lid *)0)->data), IB_SMP_DATA_SIZE);
	ck_assert_int_eq(offsetof(struct sa_mad, data), IB_SA_DATA_OFFS);
	ck_assert_int_eq(SA_DATA_SIZE, IB_SA_DATA_SIZE);
	ck_assert_int_eq(sizeof(((struct sa_mad *)0)->data), IB_SA_DATA_SIZE);
	ck_assert_int_eq(sizeof(((struct smp_dr *)0)->initial_path), IB_SUBNET_PATH_HOPS_MAX);
	ck_assert_int_eq(sizeof(((struct smp_dr *)0)->return_path), IB_SUBNET_PATH_HOPS_MAX);
	ck_assert_int_eq(SMP_MAX_HOPS, IB_SUBNET_PATH_HOPS_MAX - 1);
	ck_assert_int_eq(offsetof(struct mad_hdr, attr_id), 16);

	ck_assert_int_eq(MAD_CLASS_SMI, IB_SMI_CLASS);
	ck_assert_int_eq(MAD_CLASS_SMI_DR, IB_SMI_DIRECT_CLASS);
	ck_assert_int_eq(MAD_CLASS_SA, IB_SA_CLASS);
	ck_assert_int_eq(MAD_CLASS_PERF, IB_PERFORMANCE_CLASS);

	ck_assert_int_eq(MAD_METHOD_GET, IB_MAD_METHOD_GET);
	ck_assert_int_eq(MAD_METHOD_SET, IB_MAD_METHOD_SET);
	ck_assert_int_eq(MAD_METHOD_SEND, IB_MAD_METHOD_SEND);
	ck_assert_int_eq(MAD_METHOD_TRAP, IB_MAD_METHOD_TRAP);
	ck_assert_int_eq(MAD_METHOD_REPORT, IB_MAD_METHOD_REPORT);
	ck_assert_int_eq(MAD_METHOD_TRAP_REPRESS, IB_MAD_METHOD_TRAP_REPRESS);
	ck_assert_int_eq(MAD_METHOD_GET_TABLE, IB_MAD_METHOD_GET_TABLE);
	ck_assert_int_eq(MAD_METHOD_GET_TRACE_TABLE, IB_MAD_METHOD_GET_TRACE_TABLE);
	ck_assert_int_eq(MAD_METHOD_GETMULTI, IB_MAD_METHOD_GETMULTI);
	ck_assert_int_eq(MAD_METHOD_DELETE, IB_MAD_METHOD_DELETE);
	ck_assert_int_eq(MAD_METHOD_RESP, IB_MAD_RESPONSE);
	ck_assert_int_eq(MAD_METHOD_GET | MAD_METHOD_RESP, IB_MAD_METHOD_GET_RESPONSE);

	ck_assert_int_eq(SMP_ATTR_NOTICE, NOTICE);
	ck_assert_int_eq(SMP_ATTR_NODE_DESC, IB_ATTR_NODE_DESC);
	ck_assert_int_eq(SMP_ATTR_NODE_INFO, IB_ATTR_NODE_INFO);
	ck_assert_int_eq(SMP_ATTR_SWITCH_INFO, IB_ATTR_SWITCH_INFO);
	ck_assert_int_eq(SMP_ATTR_GUID_INFO, IB_ATTR_GUID_INFO);
	ck_assert_int_eq(SMP_ATTR_PORT_INFO, IB_ATTR_PORT_INFO);
	ck_assert_int_eq(SMP_ATTR_PKEY_TABLE, IB_ATTR_PKEY_TBL);
	ck_assert_int_eq(SMP_ATTR_SL2VL_TABLE, IB_ATTR_SLVL_TABLE);
	ck_assert_int_eq(SMP_ATTR_VL_ARB_TABLE, IB_ATTR_VL_ARBITRATION);
	ck_assert_int_eq(SMP_ATTR_LFT, IB_ATTR_LINEARFORWTBL);
	ck_assert_int_eq(SMP_ATTR_RFT, 0x1a);	/* RandomForwardingTable */
	ck_assert_int_eq(SMP_ATTR_MFT, IB_ATTR_MULTICASTFORWTBL);
	ck_assert_int_eq(SMP_ATTR_SM_INFO, IB_ATTR_SMINFO);

	ck_assert_int_eq(MAD_STATUS_BUSY, IB_MAD_STS_BUSY);
	ck_assert_int_eq(MAD_STATUS_REDIRECT, IB_MAD_STS_REDIRECT);
	ck_assert_int_eq(MAD_STATUS_BAD_VERSION, IB_MAD_STS_BAD_BASE_VER_OR_CLASS);
	ck_assert_int_eq(MAD_STATUS_METHOD_UNSUPP, IB_MAD_STS_METHOD_NOT_SUPPORTED);
	ck_assert_int_eq(MAD_STATUS_ATTR_UNSUPP, IB_MAD_STS_METHOD_ATTR_NOT_SUPPORTED);
	ck_assert_int_eq(MAD_STATUS_INVALID_FIELD, IB_MAD_STS_INV_ATTR_VALUE);

	ck_assert_int_eq(NODE_TYPE_CA, IB_NODE_CA);
	ck_assert_int_eq(NODE_TYPE_SWITCH, IB_NODE_SWITCH);
	ck_assert_int_eq(NODE_TYPE_ROUTER, IB_NODE_ROUTER);

	/* 14.2.5.6 table 152: PortState and PortPhysicalState encodings */
	ck_assert_int_eq(PORT_STATE_DOWN, 1);
	ck_assert_int_eq(PORT_STATE_ACTIVE, 4);
	ck_assert_int_eq(PHYS_STATE_POLLING, 2);
	ck_assert_int_eq(PHYS_STATE_LINKUP, 5);
	ck_assert_int_eq(PHYS_STATE_PHY_TEST, 7);
	/* CapabilityMask: IsSM is bit 1, IsExtendedSpeedsSupported bit 14 */
	ck_assert_uint_eq(PI_CAP_IS_SM, 0x2);
	ck_assert_uint_eq(PI_CAP_HAS_EXT_SPEEDS, 0x4000);
	ck_assert_uint_eq(SMP_DR_DIRECTION, 0x8000);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Byte arrays: data areas, paths, descriptions, whole blocks           */
/* ------------------------------------------------------------------ */

static void pattern(uint8_t *p, size_t n, unsigned seed)
{
	uint32_t x = 2463534242u ^ seed;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)(x >> 7) | 1;	/* never 0: a miss shows */
	}
}

/* libibmad puts `len` bytes of `src` into an otherwise empty image at the
 * field; our struct member at `ours_off` must then hold them, and only
 * them; and writing our member gives libibmad's image. */
static void check_array(enum MAD_FIELDS fld, int base, size_t len,
			size_t ours_off, const char *what)
{
	uint8_t src[MAD_SIZE], img[2 * MAD_SIZE], ours[2 * MAD_SIZE], back[MAD_SIZE];

	ck_assert(ours_off + len <= MAD_SIZE);
	pattern(src, sizeof(src), (unsigned)fld);
	memset(img, 0, sizeof(img));
	mad_set_array(img, base, fld, src);
	for (size_t i = 0; i < MAD_SIZE; i++) {
		bool inside = i >= ours_off && i < ours_off + len;

		ck_assert_msg(img[i] == (inside ? src[i - ours_off] : 0),
			      "%s: byte %zu: libibmad does not put the array where our struct has it",
			      what, i);
	}
	memset(ours, 0, sizeof(ours));
	memcpy(ours + ours_off, src, len);
	assert_image(ours, img, sizeof(img), what, "(array)");
	mad_get_array(ours, base, fld, back);
	ck_assert_mem_eq(back, src, len);
}

START_TEST(arrays)
{
	/* data areas and paths, at our structs' members */
	check_array(IB_SA_DATA_F, 0, SA_DATA_SIZE, offsetof(struct sa_mad, data), "SA data");
	check_array(IB_GS_DATA_F, 0, MAD_SIZE - 64, offsetof(struct smp_lid, data),
		    "SMP data + reserved");
	check_array(IB_DRSMP_PATH_F, 0, 64, offsetof(struct smp_dr, initial_path), "InitialPath");
	check_array(IB_DRSMP_RPATH_F, 0, 64, offsetof(struct smp_dr, return_path), "ReturnPath");
	/* attribute-sized blocks at the SMP data */
	check_array(IB_NODE_DESC_F, 64, sizeof(struct smp_node_desc),
		    64 + offsetof(struct smp_node_desc, desc), "NodeDescription");
	check_array(IB_LINEAR_FORW_TBL_F, 64, sizeof(struct smp_lft_block),
		    64 + offsetof(struct smp_lft_block, port), "LFT block");
	check_array(IB_MULTICAST_FORW_TBL_F, 64, sizeof(struct smp_mft_block),
		    64 + offsetof(struct smp_mft_block, mask), "MFT block");
	check_array(IB_VL_ARBITRATION_TABLE_F, 64, sizeof(struct smp_vl_arb_table),
		    64 + offsetof(struct smp_vl_arb_table, entry), "VLArbitration");
	check_array(IB_NOTICE_DATA_DETAILS_F, 64, sizeof(((struct smp_notice *)0)->data_details),
		    64 + offsetof(struct smp_notice, data_details), "Notice DataDetails");
	/* a Notice inside an SA Report: at IB_SA_DATA_OFFS */
	check_array(IB_NOTICE_DATA_DETAILS_F, IB_SA_DATA_OFFS,
		    sizeof(((struct smp_notice *)0)->data_details),
		    IB_SA_DATA_OFFS + offsetof(struct smp_notice, data_details),
		    "Notice DataDetails in SA data");
}
END_TEST

START_TEST(node_desc_text)
{
	uint8_t img[MAD_SIZE];
	const char text[] = "MF0;switch-a1:MSB7700/U1 HCA-1 \xc3\xa9t\xc3\xa9";
	char full[64];
	const struct smp_lid *smp = (const struct smp_lid *)img;
	const struct smp_node_desc *nd = (const struct smp_node_desc *)smp->data;

	/* a 64-byte description with no terminator at all */
	memset(full, 'x', sizeof(full));
	memcpy(full, text, sizeof(text) - 1);
	memset(img, 0, sizeof(img));
	mad_set_array(img, IB_SMP_DATA_OFFS, IB_NODE_DESC_F, full);
	ck_assert_mem_eq(nd->desc, full, 64);
	ck_assert_int_eq(nd->desc[63], 'x');
	ck_assert_int_eq(img[IB_SMP_DATA_OFFS + 64], 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Accessors, exhaustively                                              */
/* ------------------------------------------------------------------ */

START_TEST(nibble_macros)
{
	for (unsigned b = 0; b < 256; b++) {
		CHECK(HI4((uint8_t)b) == b >> 4, "HI4(0x%02x) = %u", b, HI4((uint8_t)b));
		CHECK(LO4((uint8_t)b) == (b & 0xf), "LO4(0x%02x) = %u", b, LO4((uint8_t)b));
		for (unsigned v = 0; v < 32; v++) {
			uint8_t x = (uint8_t)b, y = (uint8_t)b;

			SET_HI4(x, v);
			SET_LO4(y, v);
			/* the other nibble kept; values above 15 masked */
			CHECK(x == ((b & 0x0f) | (v & 0xf) << 4), "SET_HI4(0x%02x, %u) = 0x%02x", b, v, x);
			CHECK(y == ((b & 0xf0) | (v & 0xf)), "SET_LO4(0x%02x, %u) = 0x%02x", b, v, y);
		}
	}
}
END_TEST

START_TEST(dr_hops_all)
{
	uint8_t img[MAD_SIZE], ours[MAD_SIZE];
	struct smp_dr *s = (struct smp_dr *)ours;
	const struct smp_dr *li = (const struct smp_dr *)img;

	for (unsigned ptr = 0; ptr < 256; ptr++) {
		for (unsigned cnt = 0; cnt < 256; cnt++) {
			memset(img, 0, sizeof(img));
			mad_set_field(img, 0, IB_DRSMP_HOPPTR_F, ptr);
			mad_set_field(img, 0, IB_DRSMP_HOPCNT_F, cnt);
			CHECK(smp_dr_hop_ptr(li) == ptr && smp_dr_hop_cnt(li) == cnt,
			      "libibmad ptr %u cnt %u read as ptr %u cnt %u", ptr, cnt,
			      smp_dr_hop_ptr(li), smp_dr_hop_cnt(li));
			memset(ours, 0xa5, sizeof(ours));
			memcpy(ours + 8, img + 8, MAD_SIZE - 8);
			memcpy(ours, img, 6);
			smp_dr_set_hops(s, (uint8_t)ptr, (uint8_t)cnt);
			assert_image(ours, img, MAD_SIZE, "DR hops", "hop ptr/cnt");
		}
	}
}
END_TEST

START_TEST(sl2vl_all)
{
	uint8_t img[MAD_SIZE], ours[MAD_SIZE];
	struct smp_sl2vl_table *t = (struct smp_sl2vl_table *)(ours + 64);

	/* a busy table first, then every (sl, vl) written over it */
	memset(img, 0, sizeof(img));
	mad_set_field64(img, 64, IB_SLTOVL_MAPPING_TABLE_F, 0x0123456789abcdefull);
	for (unsigned sl = 0; sl < 16; sl++)
		ck_assert_uint_eq(sl2vl_get((const struct smp_sl2vl_table *)(img + 64), sl), sl);
	memcpy(ours, img, sizeof(ours));
	for (unsigned sl = 0; sl < 16; sl++) {
		for (unsigned vl = 0; vl < 16; vl++) {
			lset_sl2vl_nibble(img, 64, sl, vl);
			sl2vl_set(t, sl, vl);
			assert_image(ours, img, MAD_SIZE, "SLtoVL", "sl2vl_set");
			for (unsigned o = 0; o < 16; o++) {
				unsigned want = o == sl ? vl : (o < sl ? (7 * o + 3) & 0xf : o);

				CHECK(sl2vl_get(t, o) == want, "after SL%u := VL%u, SL%u reads %u, not %u",
				      sl, vl, o, sl2vl_get(t, o), want);
			}
		}
		/* leave a value that differs from the initial one */
		lset_sl2vl_nibble(img, 64, sl, (7 * sl + 3) & 0xf);
		sl2vl_set(t, sl, (7 * sl + 3) & 0xf);
	}
	/* VL values above 15 do not spill into the neighbour SL */
	sl2vl_set(t, 4, 0x1f);
	ck_assert_uint_eq(sl2vl_get(t, 4), 0xf);
	ck_assert_uint_eq(sl2vl_get(t, 5), (7 * 5 + 3) & 0xf);
	ck_assert_uint_eq(sl2vl_get(t, 3), (7 * 3 + 3) & 0xf);
}
END_TEST

/* The PortInfo setters mask their value to the field (no spill-over). */
START_TEST(pi_setters_mask)
{
	uint8_t img[MAD_SIZE], ours[MAD_SIZE];
	const struct attr *a = &attrs[6];
	struct smp_port_info *p = (struct smp_port_info *)(ours + 64);
	struct {
		void (*set)(struct smp_port_info *, unsigned);
		enum MAD_FIELDS f;
		unsigned v, width;
	} cases[] = {
		{ pi_set_port_state, IB_PORT_STATE_F, 0x3a, 4 },
		{ pi_set_phys_state, IB_PORT_PHYS_STATE_F, 0x25, 4 },
		{ pi_set_lmc, IB_PORT_LMC_F, 0xfd, 3 },
		{ pi_set_neighbor_mtu, IB_PORT_NEIGHBOR_MTU_F, 0x13, 4 },
		{ pi_set_op_vls, IB_PORT_OPER_VLS_F, 0x72, 4 },
		{ pi_set_subnet_timeout, IB_PORT_SUBN_TIMEOUT_F, 0xe9, 5 },
		{ pi_set_client_rereg, IB_PORT_CLIENT_REREG_F, 0x2, 1 },
		{ pi_set_client_rereg, IB_PORT_CLIENT_REREG_F, 0x3, 1 },
	};

	ck_assert_str_eq(a->name, "PortInfo");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (int start = 0; start < 2; start++) {
			/* over an all-zero and over an all-ones PortInfo */
			if (start)
				lib_image_all(a, img, true);
			else
				memset(img, 0, sizeof(img));
			memcpy(ours, img, sizeof(ours));
			cases[c].set(p, cases[c].v);
			mad_set_field(img, 64, cases[c].f, cases[c].v & ((1u << cases[c].width) - 1));
			assert_image(ours, img, MAD_SIZE, "PortInfo setter masking",
				     mad_field_name(cases[c].f));
		}
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* Whole MADs as the SM meets them                                      */
/* ------------------------------------------------------------------ */

/* A NodeInfo GetResp as a switch returns it over two hops, built by
 * libibmad, read through our structs only. */
START_TEST(dr_node_info_response)
{
	uint8_t img[MAD_SIZE];
	const struct smp_dr *s = (const struct smp_dr *)img;
	const struct smp_node_info *ni = (const struct smp_node_info *)s->data;
	uint8_t path[64] = { 0, 3, 17 }, rpath[64] = { 0, 0, 5 };

	memset(img, 0, sizeof(img));
	mad_set_field(img, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(img, 0, IB_MAD_MGMTCLASS_F, IB_SMI_DIRECT_CLASS);
	mad_set_field(img, 0, IB_MAD_CLASSVER_F, 1);
	mad_set_field(img, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET);
	mad_set_field(img, 0, IB_MAD_RESPONSE_F, 1);
	mad_set_field(img, 0, IB_DRSMP_DIRECTION_F, 1);
	mad_set_field(img, 0, IB_DRSMP_HOPCNT_F, 2);
	mad_set_field(img, 0, IB_DRSMP_HOPPTR_F, 3);
	mad_set_field64(img, 0, IB_MAD_TRID_F, 0x0000000700abcdefull);
	mad_set_field(img, 0, IB_MAD_ATTRID_F, IB_ATTR_NODE_INFO);
	mad_set_field(img, 0, IB_DRSMP_DRSLID_F, 0xffff);
	mad_set_field(img, 0, IB_DRSMP_DRDLID_F, 0xffff);
	mad_set_array(img, 0, IB_DRSMP_PATH_F, path);
	mad_set_array(img, 0, IB_DRSMP_RPATH_F, rpath);
	mad_set_field(img, IB_SMP_DATA_OFFS, IB_NODE_BASE_VERS_F, 1);
	mad_set_field(img, IB_SMP_DATA_OFFS, IB_NODE_CLASS_VERS_F, 1);
	mad_set_field(img, IB_SMP_DATA_OFFS, IB_NODE_TYPE_F, IB_NODE_SWITCH);
	mad_set_field(img, IB_SMP_DATA_OFFS, IB_NODE_NPORTS_F, 36);
	mad_set_field64(img, IB_SMP_DATA_OFFS, IB_NODE_GUID_F, 0x0002c9030012abcdull);
	mad_set_field64(img, IB_SMP_DATA_OFFS, IB_NODE_PORT_GUID_F, 0x0002c9030012abcdull);
	mad_set_field(img, IB_SMP_DATA_OFFS, IB_NODE_LOCAL_PORT_F, 17);
	mad_set_field(img, IB_SMP_DATA_OFFS, IB_NODE_VENDORID_F, 0x0002c9);

	ck_assert_uint_eq(s->hdr.mgmt_class, MAD_CLASS_SMI_DR);
	ck_assert_uint_eq(s->hdr.method, MAD_METHOD_GET | MAD_METHOD_RESP);
	ck_assert(be16toh(s->hdr.status) & SMP_DR_DIRECTION);
	ck_assert_uint_eq(be16toh(s->hdr.status) & 0x7fff, 0);
	ck_assert_uint_eq(smp_dr_hop_cnt(s), 2);
	ck_assert_uint_eq(smp_dr_hop_ptr(s), 3);
	ck_assert_uint_eq(be64toh(s->hdr.tid) & 0xffffffff, 0x00abcdef);
	ck_assert_uint_eq(be16toh(s->hdr.attr_id), SMP_ATTR_NODE_INFO);
	ck_assert_uint_eq(s->initial_path[1], 3);
	ck_assert_uint_eq(s->initial_path[2], 17);
	ck_assert_uint_eq(s->return_path[2], 5);
	ck_assert_uint_eq(ni->node_type, NODE_TYPE_SWITCH);
	ck_assert_uint_eq(ni->num_ports, 36);
	ck_assert_uint_eq(be64toh(ni->node_guid), 0x0002c9030012abcdull);
	ck_assert_uint_eq(ni->local_port, 17);
	ck_assert_uint_eq(smp_node_info_vendor(ni), 0x0002c9);
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *wire_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc;

	tc = tcase_create("attributes");
	tcase_add_loop_test(tc, attr_decode, 0, N_ATTRS);
	tcase_add_loop_test(tc, attr_encode, 0, N_ATTRS);
	tcase_add_loop_test(tc, attr_walk, 0, N_ATTRS);
	tcase_add_loop_test(tc, attr_isolate, 0, N_ATTRS);
	suite_add_tcase(s, tc);

	tc = tcase_create("layout");
	tcase_add_test(tc, layout_constants);
	tcase_add_test(tc, arrays);
	tcase_add_test(tc, node_desc_text);
	tcase_add_test(tc, dr_node_info_response);
	suite_add_tcase(s, tc);

	tc = tcase_create("accessors");
	tcase_add_test(tc, nibble_macros);
	tcase_add_test(tc, dr_hops_all);
	tcase_add_test(tc, sl2vl_all);
	tcase_add_test(tc, pi_setters_mask);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	init_tables();
	sr = srunner_create(wire_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
