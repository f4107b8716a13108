// CohortCompliance
