/// How an outside source's people map to study codes: the roster's codes, its MRNs, a user map
/// the coordinator provides, and the pseudonyms of one export recipient. Built by the caller
/// (which holds the roster and keys) and consulted by the readers.
package struct ParticipantDirectory: Sendable {
    /// Every study code on the roster.
    public var codes: Set<String>
    /// MRN → study code (for `Patient.identifier` in the protocol's MRN system).
    package var mrns: [String: String]
    /// The coordinator's map: source user id (or FHIR patient identifier) → study code, and
    /// the date shift to undo for ids that were an export's pseudonyms.
    public var userMap: UserMap
    /// Study code → IANA time zone (shifted instants move on the participant's wall clock).
    package var timeZones: [String: String]
    /// One recipient's pseudonym → (study code, the day offset its dates were shifted by).
    public var pseudonyms: [String: Pseudonymous]

    /// A participant as one export recipient saw them.
    package struct Pseudonymous: Sendable, Equatable {
        public var code: String
        /// Days the recipient's dates were moved by (≤ 0); import moves them back.
        package var shiftDays: Int
        /// The participant's IANA zone: shifted instants moved on their wall clock there.
        public var timeZone: String
        package init(code: String, shiftDays: Int, timeZone: String) {
            self.code = code
            self.shiftDays = shiftDays
            self.timeZone = timeZone
        }
    }

    package init(
        codes: Set<String>, mrns: [String: String] = [:], userMap: UserMap = UserMap(), timeZones: [String: String] = [:],
        pseudonyms: [String: Pseudonymous] = [:]
    ) {
        self.codes = codes
        self.mrns = mrns
        self.userMap = userMap
        self.timeZones = timeZones
        self.pseudonyms = pseudonyms
    }
}
