import CohortCore
import Foundation

/// Maps instants to local days (days since 1970-01-01) in one time zone, fast.
///
/// Equivalent to `Timestamp.localDate(in:)`, but remembers the UTC offset together with the
/// span in which it is known not to change (from the instant it was looked up to the zone's
/// next transition), so a participant's records, usually streamed in time order, need a time
/// zone lookup only around DST changes.
struct DayClock: Sendable {
    let timeZone: TimeZone
    private var validFrom: Int64 = 1
    private var validUntil: Int64 = 0
    private var offsetMilliseconds: Int64 = 0

    init(timeZone: TimeZone) { self.timeZone = timeZone }

    /// The local day of `instant`, as days since 1970-01-01.
    mutating func day(of instant: Timestamp) -> Int {
        let ms = instant.epochMilliseconds
        if ms < validFrom || ms >= validUntil {
            let date = Date(timeIntervalSince1970: Double(ms) / 1000)
            offsetMilliseconds = Int64(timeZone.secondsFromGMT(for: date)) * 1000
            validFrom = ms
            if let next = timeZone.nextDaylightSavingTimeTransition(after: date) {
                validUntil = Int64((next.timeIntervalSince1970 * 1000).rounded(.down))
            } else {
                validUntil = Int64.max
            }
            if validUntil <= validFrom { validUntil = validFrom + 1 }
        }
        return Int(Timestamp.floorDiv(ms + offsetMilliseconds, 86_400_000))
    }
}
