/* TEMPORARY until h-qos-sa has sm_qos_status(). */
#include <time.h>
struct sm_qos_status { const char *file; time_t loaded; const char *error; time_t error_at; };
void sm_qos_status(const struct sm *sm, struct sm_qos_status *st);
