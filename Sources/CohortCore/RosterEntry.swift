/// One roster line or `participant enroll` call, as text, before validation.
public struct RosterEntry: Sendable {
    public var code: String
    public var name: String
    public var email: String?
    public var phone: String?
    public var birthDate: String?
    public var sex: String?
    public var address: String?
    public var zip: String?
    public var mrn: String?
    public var timeZone: String
    public var enrolledOn: String
    public var devices: [String]
    /// The study site (multi-site studies), validated as a ``SiteName``; nil or empty for none.
    public var site: String?

    public init(
        code: String, name: String, email: String? = nil, phone: String? = nil, birthDate: String? = nil, sex: String? = nil,
        address: String? = nil, zip: String? = nil, mrn: String? = nil, timeZone: String, enrolledOn: String, devices: [String] = [],
        site: String? = nil
    ) {
        self.code = code
        self.name = name
        self.email = email
        self.phone = phone
        self.birthDate = birthDate
        self.sex = sex
        self.address = address
        self.zip = zip
        self.mrn = mrn
        self.timeZone = timeZone
        self.enrolledOn = enrolledOn
        self.devices = devices
        self.site = site
    }

    /// The roster CSV header, in order.
    package static let csvHeader = ["code", "name", "email", "phone", "birth_date", "sex", "address", "zip", "mrn", "time_zone", "enrolled_on", "devices"]
    /// Roster columns a file may add after ``csvHeader`` (multi-site studies: `site`).
    package static let optionalColumns = ["site"]
}
