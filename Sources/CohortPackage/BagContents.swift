/// What ``BagWriter`` recorded for a finished bag.
package struct BagContents: Sendable, Hashable, Codable {
    /// Every file under `data/`, sorted by path (UTF-8 byte order).
    package var payloadFiles: [BagFile]
    /// `bag-info.txt`, `bagit.txt`, `manifest-sha256.txt`, `tagmanifest-sha256.txt`, sorted by path.
    package var tagFiles: [BagFile]

    /// Payload and tag files together, sorted by path: what the export manifest lists, so that
    /// no file can be added to, or changed in, the bag without breaking the signature.
    package var allFiles: [BagFile] {
        (payloadFiles + tagFiles).sorted { Array($0.path.utf8).lexicographicallyPrecedes(Array($1.path.utf8)) }
    }

    /// `Payload-Oxum`: total payload octets, a dot, and the payload file count.
    package var payloadOxum: String {
        "\(payloadFiles.reduce(UInt64(0)) { $0 + $1.size }).\(payloadFiles.count)"
    }

    /// Contents as given.
    package init(payloadFiles: [BagFile], tagFiles: [BagFile]) {
        self.payloadFiles = payloadFiles
        self.tagFiles = tagFiles
    }
}
