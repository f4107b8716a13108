#ifndef COHORT_CLIBPQ_H
#define COHORT_CLIBPQ_H
// libpq's types and constants (libpq-dev), and the functions cohort calls, reached through
// libpq.so.5 loaded on first use (loader.c), not linked: a process that never opens a PostgreSQL
// store never maps libpq and what it pulls in (Kerberos, LDAP, GnuTLS, SASL: about 3 MB
// resident), and a machine without libpq runs everything but PostgreSQL.
#include <stddef.h>
#include <postgresql/libpq-fe.h>

/// Loads libpq.so.5 and resolves every function below, once per process. Returns 1 when they
/// are all there; 0 otherwise, with a reason (no secrets, no values) in `reason`.
int cohort_pq_load(char *reason, size_t reason_size);

PGconn *cohort_PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname);
ConnStatusType cohort_PQstatus(const PGconn *conn);
char *cohort_PQerrorMessage(const PGconn *conn);
void cohort_PQfinish(PGconn *conn);
PGresult *cohort_PQexec(PGconn *conn, const char *query);
PGresult *cohort_PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                              const char *const *paramValues, const int *paramLengths, const int *paramFormats,
                              int resultFormat);
PGresult *cohort_PQgetResult(PGconn *conn);
ExecStatusType cohort_PQresultStatus(const PGresult *res);
char *cohort_PQresultErrorField(const PGresult *res, int fieldcode);
void cohort_PQclear(PGresult *res);
char *cohort_PQcmdTuples(PGresult *res);
int cohort_PQntuples(const PGresult *res);
int cohort_PQnfields(const PGresult *res);
char *cohort_PQgetvalue(const PGresult *res, int tup_num, int field_num);
int cohort_PQgetisnull(const PGresult *res, int tup_num, int field_num);
int cohort_PQgetCopyData(PGconn *conn, char **buffer, int async);
int cohort_PQputCopyData(PGconn *conn, const char *buffer, int nbytes);
int cohort_PQputCopyEnd(PGconn *conn, const char *errormsg);
char *cohort_PQescapeIdentifier(PGconn *conn, const char *str, size_t len);
void cohort_PQfreemem(void *ptr);

#endif
