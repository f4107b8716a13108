public import Foundation
public import CohortCore
import CohortCrypto

/// Derives one date-shift offset per participant per recipient and applies it.
///
/// The offset comes from `HMAC-SHA256(recipientKey, "date-shift" ‖ id)`: its first 8 bytes, read
/// as an unsigned integer, pick uniformly (bias below 2⁻⁵⁰) one value of
/// `[-maxDays, maxDays] \ {0}`, or one multiple of 7 in that range when `wholeWeeks` is set, so
/// weekdays survive. `maxDays = 0` means no shift. Every date and instant of a participant moves
/// by the same number of days: time of day, UTC offset and intervals are unchanged.
public struct DateShifter: Sendable {
    /// The configured bound, in days.
    public let maxDays: Int
    /// Whether offsets are whole weeks.
    public let wholeWeeks: Bool
    private let key: [UInt8]

    /// A shifter for one recipient. Throws when `maxDays` is negative, or when `wholeWeeks` is
    /// set but the range holds no whole week (`0 < maxDays < 7`).
    public init(recipientKey: [UInt8], maxDays: Int, wholeWeeks: Bool) throws {
        guard maxDays >= 0 else {
            throw CohortError(
                .invalidInput, "date_shift.max_days is negative", at: .init(field: "deidentification.date_shift.max_days"),
                hint: "use a positive number of days, e.g. 180")
        }
        if wholeWeeks, maxDays > 0, maxDays < 7 {
            throw CohortError(
                .invalidInput, "date_shift.whole_weeks needs max_days of at least 7",
                at: .init(field: "deidentification.date_shift"), hint: "raise max_days to 7 or more, or turn whole_weeks off")
        }
        self.key = recipientKey
        self.maxDays = maxDays
        self.wholeWeeks = wholeWeeks
    }

    /// A shifter with the policy's settings.
    public init(recipientKey: [UInt8], policy: DeidentificationPolicy.DateShift) throws {
        try self.init(recipientKey: recipientKey, maxDays: policy.maxDays, wholeWeeks: policy.wholeWeeks)
    }

    /// The offset in days for the participant with internal id `id`: never 0 when `maxDays > 0`.
    public func offset(for id: UUID) -> Int {
        guard maxDays > 0 else { return 0 }
        let message = Array("date-shift".utf8) + Array(id.uuidString.lowercased().utf8)
        let mac = HMACSHA256.authenticationCode(key: key, message: message)
        var value: UInt64 = 0
        for byte in mac.prefix(8) { value = value << 8 | UInt64(byte) }
        let unit = wholeWeeks ? 7 : 1
        let steps = maxDays / unit  // non-zero choices on each side
        let index = Int(value % UInt64(2 * steps))
        let magnitude = index < steps ? -(steps - index) : index - steps + 1
        return magnitude * unit
    }

    /// `instant` moved by `offset` days (time of day and UTC offset kept).
    public func shift(_ instant: Timestamp, by offset: Int) -> Timestamp { instant.adding(days: offset) }

    /// `date` moved by `offset` days.
    public func shift(_ date: CivilDate, by offset: Int) -> CivilDate { date.adding(days: offset) }
}
