import XCTest
import HappyCore

/// The action table against the code that reads it: the decoder, the encoder and the reducer
/// agree with every entry, whatever the entries are.
final class ActionTableTests: XCTestCase {
    /// A value of the parameter's type that its spec accepts.
    private func sample(_ parameter: ParameterSpec) -> String {
        switch parameter.type {
        case .integer, .number, .positiveNumber:
            guard let range = parameter.range else { return "2" }
            return "\(Int((range.lowerBound + range.upperBound) / 2) + 1)"
        case .boolean: return "true"
        case .color: return ##""#0f0""##
        }
    }

    /// An intent of `kind` carrying every parameter with a sample value.
    private func sampleIntent(_ kind: Action.Kind) -> String {
        let fields = kind.spec.parameters.map { #","\#($0.name)":\#(sample($0))"# }.joined()
        return #"{"type":"intent","id":"t","action":"\#(kind.spec.wireName)"\#(fields)}"#
    }

    private func sampleAction(_ kind: Action.Kind, file: StaticString = #filePath, line: UInt = #line) -> Action? {
        switch ClientMessageDecoder.decode(sampleIntent(kind)) {
        case .success(.intent(let intent)): return intent.action
        case let other:
            XCTFail("\(sampleIntent(kind)) decoded to \(other)", file: file, line: line)
            return nil
        }
    }

    func testEntriesAreKeyedByTheirKindAndNamedOnce() {
        XCTAssertEqual(Action.Kind.allCases.map(\.spec.kind), Action.Kind.allCases)
        XCTAssertEqual(Set(Action.wireNames).count, Action.wireNames.count, "a wire name used twice")
        XCTAssertEqual(Action.wireNames, Action.Kind.allCases.map(\.spec.wireName))
        for kind in Action.Kind.allCases {
            XCTAssertEqual(Action.Kind(wireName: kind.spec.wireName), kind)
            XCTAssertFalse(kind.spec.summary.isEmpty, "\(kind) has no summary")
            let names = kind.spec.parameters.map(\.name)
            XCTAssertEqual(Set(names).count, names.count, "\(kind) names a parameter twice")
            if kind.spec.needsOneParameter {
                XCTAssertFalse(kind.spec.parameters.contains(where: \.isRequired), "\(kind): at least one of optional ones")
            }
        }
        XCTAssertNil(Action.Kind(wireName: "face.explode"))
    }

    func testEveryActionDecodesFromItsEntryAndEncodesBack() {
        for kind in Action.Kind.allCases {
            guard let action = sampleAction(kind) else { continue }
            XCTAssertEqual(action.kind, kind)
            XCTAssertEqual(action.wireName, kind.spec.wireName)
            XCTAssertEqual(action.requiresAdmin, kind.spec.requiresAdmin)
            let encoded = IntentEncoder.intent(action, id: "t")
            XCTAssertEqual(try? ClientMessageDecoder.decode(encoded).get(), .intent(Intent(id: "t", action: action)), encoded)
            for parameter in kind.spec.parameters {
                XCTAssertTrue(encoded.contains(#""\#(parameter.name)":"#), "\(encoded) lacks \(parameter.name)")
            }
        }
    }

    func testMissingAndOutOfRangeParametersAreRefusedAsTheEntrySays() {
        for kind in Action.Kind.allCases {
            let spec = kind.spec
            if spec.parameters.contains(where: \.isRequired) || spec.needsOneParameter {
                let bare = #"{"type":"intent","action":"\#(spec.wireName)"}"#
                guard case .failure(let error) = ClientMessageDecoder.decode(bare) else { XCTFail("accepted \(bare)"); continue }
                XCTAssertEqual(error.code, .invalidValue, bare)
            }
            for parameter in spec.parameters {
                guard let range = parameter.range else { continue }
                let text = #"{"type":"intent","action":"\#(spec.wireName)","\#(parameter.name)":\#(range.upperBound + 1)}"#
                guard case .failure(let error) = ClientMessageDecoder.decode(text) else { return XCTFail("accepted \(text)") }
                XCTAssertEqual(error.code, .invalidValue)
                XCTAssertTrue(error.message.hasSuffix("must be between \(Int(range.lowerBound)) and \(Int(range.upperBound))"),
                              error.message)
            }
        }
    }

    func testTheReducerNamesTheEventOfTheEntry() {
        var changed = Scene.standard
        changed.face.happiness = 7
        changed.heart.rate = 0.1
        changed.dragon.hidden = true
        let reducer = SceneReducer(rules: SceneRules())
        for kind in Action.Kind.allCases {
            guard let action = sampleAction(kind) else { continue }
            var scene = kind == .reset ? changed : Scene.standard
            let outcome = reducer.apply(action, to: &scene)
            XCTAssertEqual(outcome.eventName, kind.spec.event, "\(kind) changed \(outcome.changes)")
        }
    }

    func testOnlyTheResetNeedsTheAdminRole() {
        XCTAssertEqual(Action.Kind.allCases.filter { $0.spec.requiresAdmin }, [.reset])
    }

    func testEventsSayHowTheyAreTold() {
        for name in EventName.allCases {
            XCTAssertFalse(name.spec.word.isEmpty, "\(name) has no word")
        }
        XCTAssertEqual(EventName.allCases.filter { $0.spec.dragonLabel != nil },
                       [.forwardButtonClicked, .backButtonClicked, .didChangeHidden, .didReset])
        let status = DragonStatus(initial: "start")
        let dragon = Scene.Dragon(x: 20, y: 10, hidden: true)
        XCTAssertEqual(status.after(.forwardButtonClicked, dragon: dragon), "forward, (x,y) = (20, 10)")
        XCTAssertEqual(status.after(.backButtonClicked, dragon: dragon), "back, (x,y) = (20, 10)")
        XCTAssertEqual(status.after(.didChangeHidden, dragon: dragon), "hide")
        XCTAssertEqual(status.after(.didReset, dragon: dragon), "start")
        XCTAssertNil(status.after(.didChangeRate, dragon: dragon))
    }
}
