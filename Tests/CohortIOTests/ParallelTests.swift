import CohortIO
import Testing

struct ParallelTests {
    struct Boom: Error {}

    @Test(arguments: [1, 2, 4, 16])
    func resultsComeBackInInputOrder(threads: Int) throws {
        let items = Array(0..<1_000)
        let squares = try Parallel.map(items, threads: threads) { $0 * $0 }
        #expect(squares == items.map { $0 * $0 })
    }

    @Test func emptyInputGivesEmptyOutput() throws {
        #expect(try Parallel.map([Int](), threads: 4) { $0 }.isEmpty)
    }

    @Test(arguments: [1, 2, 4])
    func anErrorIsRethrown(threads: Int) {
        #expect(throws: Boom.self) {
            _ = try Parallel.map(Array(0..<100), threads: threads) { item -> Int in
                if item == 37 { throw Boom() }
                return item
            }
        }
    }
}
