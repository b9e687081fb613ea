/*
 * tables.h - the table records of the SA (sm/sa/tables.c):
 * P_KeyTableRecord, SLtoVLMappingTableRecord, VLArbitrationTableRecord,
 * MulticastForwardingTableRecord.  sa_attr_find() falls back to this.
 */
#ifndef IBSM_SM_SA_TABLES_H
#define IBSM_SM_SA_TABLES_H

#include <stdint.h>

#include "sm/sa/sa.h"

const struct sa_attr *sa_tables_find(uint16_t attr_id);

#endif /* IBSM_SM_SA_TABLES_H */
