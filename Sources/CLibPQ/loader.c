// libpq loaded on first use: see include/CLibPQ.h.
#include "CLibPQ.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define COHORT_PQ_FUNCTIONS(X) \
    X(PQconnectdbParams) X(PQstatus) X(PQerrorMessage) X(PQfinish) X(PQexec) X(PQexecParams) X(PQgetResult) \
    X(PQresultStatus) X(PQresultErrorField) X(PQclear) X(PQcmdTuples) X(PQntuples) X(PQnfields) X(PQgetvalue) \
    X(PQgetisnull) X(PQgetCopyData) X(PQputCopyData) X(PQputCopyEnd) X(PQescapeIdentifier) X(PQfreemem)

// One pointer per function, typed as libpq-fe.h declares it.
#define COHORT_PQ_POINTER(name) static __typeof__(&name) p_##name;
COHORT_PQ_FUNCTIONS(COHORT_PQ_POINTER)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char failure[256];

static void load(void) {
    // The soname of libpq 9.x–17 (Debian's libpq5): the library, not its -dev symlink.
    void *library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(failure, sizeof failure, "the PostgreSQL client library (libpq.so.5) is not installed");
        return;
    }
#define COHORT_PQ_RESOLVE(name)                                                                  \
    p_##name = (__typeof__(&name))dlsym(library, #name);                                          \
    if (p_##name == NULL) {                                                                       \
        snprintf(failure, sizeof failure, "the PostgreSQL client library (libpq.so.5) lacks %s", #name); \
        return;                                                                                   \
    }
    COHORT_PQ_FUNCTIONS(COHORT_PQ_RESOLVE)
    loaded = 1;
}

int cohort_pq_load(char *reason, size_t reason_size) {
    pthread_once(&once, load);
    if (!loaded && reason != NULL && reason_size > 0) snprintf(reason, reason_size, "%s", failure);
    return loaded;
}

// The wrappers: callers reach them only through a connection, and a connection exists only
// after `cohort_pq_load` succeeded (PostgresConnection checks it before connecting).
PGconn *cohort_PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname) {
    return p_PQconnectdbParams(keywords, values, expand_dbname);
}
ConnStatusType cohort_PQstatus(const PGconn *conn) { return p_PQstatus(conn); }
char *cohort_PQerrorMessage(const PGconn *conn) { return p_PQerrorMessage(conn); }
void cohort_PQfinish(PGconn *conn) { p_PQfinish(conn); }
PGresult *cohort_PQexec(PGconn *conn, const char *query) { return p_PQexec(conn, query); }
PGresult *cohort_PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                              const char *const *paramValues, const int *paramLengths, const int *paramFormats,
                              int resultFormat) {
    return p_PQexecParams(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat);
}
PGresult *cohort_PQgetResult(PGconn *conn) { return p_PQgetResult(conn); }
ExecStatusType cohort_PQresultStatus(const PGresult *res) { return p_PQresultStatus(res); }
char *cohort_PQresultErrorField(const PGresult *res, int fieldcode) { return p_PQresultErrorField(res, fieldcode); }
void cohort_PQclear(PGresult *res) { p_PQclear(res); }
char *cohort_PQcmdTuples(PGresult *res) { return p_PQcmdTuples(res); }
int cohort_PQntuples(const PGresult *res) { return p_PQntuples(res); }
int cohort_PQnfields(const PGresult *res) { return p_PQnfields(res); }
char *cohort_PQgetvalue(const PGresult *res, int tup_num, int field_num) { return p_PQgetvalue(res, tup_num, field_num); }
int cohort_PQgetisnull(const PGresult *res, int tup_num, int field_num) { return p_PQgetisnull(res, tup_num, field_num); }
int cohort_PQgetCopyData(PGconn *conn, char **buffer, int async) { return p_PQgetCopyData(conn, buffer, async); }
int cohort_PQputCopyData(PGconn *conn, const char *buffer, int nbytes) { return p_PQputCopyData(conn, buffer, nbytes); }
int cohort_PQputCopyEnd(PGconn *conn, const char *errormsg) { return p_PQputCopyEnd(conn, errormsg); }
char *cohort_PQescapeIdentifier(PGconn *conn, const char *str, size_t len) { return p_PQescapeIdentifier(conn, str, len); }
void cohort_PQfreemem(void *ptr) { p_PQfreemem(ptr); }
