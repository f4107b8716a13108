// CohortCrypto
