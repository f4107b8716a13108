package import Foundation
package import CohortCore
import CohortCrypto

/// Derives one date-shift offset per participant — the same for every recipient — and the
/// participant's ``ParticipantShift`` that applies it.
///
/// The offset comes from `HMAC-SHA256(key, "date-shift" ‖ id)`, where `key` is the study's
/// date-shift key (`Keystore.dateShiftKey()`, derived from the study secret alone, never from a
/// recipient): per-recipient shifts would let two recipients who compare their exports (record
/// values link the rows) learn each shift's difference. Its first 8 bytes, read
/// as an unsigned integer, pick uniformly (bias below 2⁻⁵⁰) one value of `[-maxDays, -1]`, or one
/// multiple of 7 in `[-7·⌊maxDays/7⌋, -7]` when `wholeWeeks` is set, so weekdays survive.
/// Shifts only go back in time, so a real date in the past never becomes a published date in the
/// future. `maxDays = 0` means no shift.
///
/// Instants are shifted on the participant's wall clock, not in UTC, and written at one UTC offset
/// per participant: see ``ParticipantShift`` and docs/deidentification.md, "Times and time zones".
package struct DateShifter: Sendable {
    /// The configured bound, in days.
    package let maxDays: Int
    /// Whether offsets are whole weeks.
    package let wholeWeeks: Bool
    private let key: [UInt8]
    /// Whether every participant's instants are written at `+00:00` (the `utc_offset` column
    /// generalized for k-anonymity) instead of their zone's standard offset.
    package var publishesInUTC = false

    /// A shifter keyed by the study's date-shift key. Throws when `maxDays` is negative, or when
    /// `wholeWeeks` is set but the range holds no whole week (`0 < maxDays < 7`).
    package init(key: [UInt8], maxDays: Int, wholeWeeks: Bool) throws {
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
        self.key = key
        self.maxDays = maxDays
        self.wholeWeeks = wholeWeeks
    }

    /// A shifter with the policy's settings.
    package init(key: [UInt8], policy: DeidentificationPolicy.DateShift) throws {
        try self.init(key: key, maxDays: policy.maxDays, wholeWeeks: policy.wholeWeeks)
    }

    /// The offsets this shifter draws from, in days (`-180 ... -1`, or `-175 ... -7` in whole
    /// weeks); nil when `maxDays` is 0 (no shift).
    public var range: ClosedRange<Int>? {
        guard maxDays > 0 else { return nil }
        return wholeWeeks ? -(maxDays / 7 * 7)...(-7) : -maxDays...(-1)
    }

    /// The offset in days for the participant with internal id `id`: always negative when
    /// `maxDays > 0`, 0 otherwise.
    public func offset(for id: UUID) -> Int {
        guard maxDays > 0 else { return 0 }
        let message = Array("date-shift".utf8) + Array(id.uuidString.lowercased().utf8)
        let mac = HMACSHA256.authenticationCode(key: key, message: message)
        var value: UInt64 = 0
        for byte in mac.prefix(8) { value = value << 8 | UInt64(byte) }
        let unit = wholeWeeks ? 7 : 1
        let steps = maxDays / unit  // the choices: -unit, -2·unit … -steps·unit
        let index = Int(value % UInt64(steps))
        return -(index + 1) * unit
    }

    /// The shift of `participant`: their offset, their time zone, and the one UTC offset their
    /// times are published at (their zone's standard offset at `reference`, the export's
    /// creation instant). A zone name Foundation does not know (the roster refuses them) is read
    /// as UTC.
    public func shift(for participant: Participant, reference: Timestamp) -> ParticipantShift {
        let zone = TimeZone(identifier: participant.timeZone) ?? TimeZone(secondsFromGMT: 0) ?? .gmt
        return ParticipantShift(days: offset(for: participant.id), zone: zone, reference: reference, publishedOffsetSeconds: publishesInUTC ? 0 : nil)
    }

    /// A number in [-1, 1) for participant `id` and `day`, keyed like the offsets (the noise of a
    /// masked holiday value; nobody without the key can tell it from the participant's own).
    package func noise(for id: UUID, day: Int) -> Double {
        let message = Array("holiday-mask".utf8) + Array(id.uuidString.lowercased().utf8) + Array(String(day).utf8)
        let mac = HMACSHA256.authenticationCode(key: key, message: message)
        var value: UInt64 = 0
        for byte in mac.prefix(8) { value = value << 8 | UInt64(byte) }
        return Double(value >> 11) / Double(1 << 52) - 1
    }

    /// `date` moved by `offset` days.
    public func shift(_ date: CivilDate, by offset: Int) -> CivilDate { date.adding(days: offset) }
}
