public import ArgumentParser
import CohortKit

extension ExportCompression: ExpressibleByArgument {}
