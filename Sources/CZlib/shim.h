#ifndef COHORT_CZLIB_SHIM_H
#define COHORT_CZLIB_SHIM_H
#include <zlib.h>
#endif
