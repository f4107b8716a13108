/// cohort's version, as written into exports and bag-info.txt.
public enum CohortVersion {
    /// The version string, e.g. `0.1.0`.
    public static let string = "0.1.0"
}
