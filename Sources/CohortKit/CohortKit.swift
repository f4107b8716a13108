// CohortKit
