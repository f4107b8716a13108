#ifndef COHORT_CLIBXML2_SHIM_H
#define COHORT_CLIBXML2_SHIM_H
#include <libxml/xmlversion.h>
/* Debian's libxml2 is built with ICU, and then its encoding.h includes the system's ICU headers,
   whose UErrorCode clashes with the ICU that Foundation bundles (_FoundationICU) in any Swift
   module that imports both: a clean build fails with "'UErrorCode' has different definitions in
   different modules". The only ICU use in libxml2's public headers is two trailing pointers of
   xmlCharEncodingHandler, which cohort never allocates or reads, so the headers are read without
   them; the library itself is unchanged. */
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <libxml/SAX2.h>
#endif
