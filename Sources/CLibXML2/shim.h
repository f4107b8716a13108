#ifndef COHORT_CLIBXML2_SHIM_H
#define COHORT_CLIBXML2_SHIM_H
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <libxml/SAX2.h>
#endif
