// CohortExport
