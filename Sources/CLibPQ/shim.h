#ifndef COHORT_CLIBPQ_SHIM_H
#define COHORT_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
