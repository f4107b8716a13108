// CohortStore
