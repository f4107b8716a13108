// CohortDeid
