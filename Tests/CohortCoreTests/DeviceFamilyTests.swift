import CohortCore
import Testing

struct DeviceFamilyTests {
    @Test(arguments: [
        ("Watch2,4", "Apple Watch"), ("Watch6,2", "Apple Watch"), ("Watch", "Apple Watch"), ("iPhone14,2", "iPhone"), ("iPhone", "iPhone"),
        ("iPad13,1", "iPad"), ("iPod9,1", "iPod"),
    ])
    func hardwareIdentifiersNameTheirFamily(source: String, family: String) {
        #expect(DeviceFamily.apple(source) == family)
    }

    @Test(arguments: ["Watchman", "Watch6", "Watch6,", "Watch,2", "iPhone14,2a", "Apple Watch", "Fitbit Charge", "other", "", "Watch6,2,1"])
    func otherSourcesHaveNoFamily(source: String) {
        #expect(DeviceFamily.apple(source) == nil)
    }
}
