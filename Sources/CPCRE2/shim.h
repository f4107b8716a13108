#ifndef COHORT_CPCRE2_SHIM_H
#define COHORT_CPCRE2_SHIM_H
/* The 8-bit library (UTF-8 and byte subjects); pcre2.h asks for the width before it is included. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif
