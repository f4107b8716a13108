/// cohort's version, as written into exports and bag-info.txt.
public enum CohortVersion {
    public static let string = "0.1.0"
}
