// CohortPackage
