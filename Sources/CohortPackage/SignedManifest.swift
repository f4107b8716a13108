public import Foundation

/// A manifest and its detached signature as written beside an archive.
public struct SignedManifest: Sendable, Hashable {
    /// `<name>.manifest.json`.
    public var manifestURL: URL
    /// `<name>.manifest.json.sig`: the raw 64-byte Ed25519 signature over the manifest file bytes.
    public var signatureURL: URL
    /// The manifest as signed (with its `signer` set to the signing key).
    public var manifest: ExportManifest

    /// A signed manifest as given.
    public init(manifestURL: URL, signatureURL: URL, manifest: ExportManifest) {
        self.manifestURL = manifestURL
        self.signatureURL = signatureURL
        self.manifest = manifest
    }
}
