"""kubectl's JSONPath dialect: the cases of k8s.io/client-go/util/jsonpath/jsonpath_test.go
and parser_test.go (v0.36.3), ported. Go structs become dicts, so objects print with sorted
keys (Go's json.Marshal of a map) where client-go's expectations show struct field order."""

from __future__ import annotations

import json

import pytest

from kschedctl.printers.jsonpath import JSONPathError, parse

TYPES = {
    "bools": [True, False, True, False],
    "integers": [1, 2, 3, 4],
    "floats": [1.0, 2.2, 3.3, 4.0],
    "strings": ["one", "two", "three", "four"],
    "interfaces": [True, "one", 1, 1.1],
    "maps": [
        {"name": "one", "value": 1},
        {"name": "two", "value": 2.02},
        {"name": "three", "value": 3.03},
        {"name": "four", "value": 4.04},
    ],
}

STORE = {
    "Name": "jsonpath",
    "Book": [
        {
            "Category": "reference",
            "Author": "Nigel Rees",
            "Title": "Sayings of the Centurey",
            "Price": 8.95,
        },
        {
            "Category": "fiction",
            "Author": "Evelyn Waugh",
            "Title": "Sword of Honour",
            "Price": 12.99,
        },
        {"Category": "fiction", "Author": "Herman Melville", "Title": "Moby Dick", "Price": 8.99},
    ],
    "Bicycle": [
        {"Color": "red", "Price": 19.95, "IsNew": True},
        {"Color": "green", "Price": 20.01, "IsNew": False},
    ],
    "Labels": {"engieer": 10, "web/html": 15, "k8s-app": 20},
    "Employees": {"jason": "manager", "dan": "clerk"},
}

POINTS = json.loads("""[
    {"id": "i1", "x":4, "y":-5},
    {"id": "i2", "x":-2, "y":-5, "z":1},
    {"id": "i3", "x":  8, "y":  3 },
    {"id": "i4", "x": -6, "y": -1 },
    {"id": "i5", "x":  0, "y":  2, "z": 1 },
    {"id": "i6", "x":  1, "y":  4 },
    {"id": "i7", "x":  null, "y":  4 }
]""")

NODES = json.loads("""{
  "kind": "List",
  "items":[
    {"kind":"None", "metadata":{"name":"127.0.0.1", "labels":{"kubernetes.io/hostname":"127.0.0.1"}},
     "status":{"capacity":{"cpu":"4"}, "ready": true,
               "addresses":[{"type": "LegacyHostIP", "address":"127.0.0.1"}]}},
    {"kind":"None", "metadata":{"name":"127.0.0.2", "labels":{"kubernetes.io/hostname":"127.0.0.2"}},
     "status":{"capacity":{"cpu":"8"}, "ready": false,
               "addresses":[{"type": "LegacyHostIP", "address":"127.0.0.2"},
                            {"type": "another", "address":"127.0.0.3"}]}}
  ],
  "users":[{"name": "myself", "user": {}},
           {"name": "e2e", "user": {"username": "admin", "password": "secret"}}]
}""")

PODS = {
    "items": [
        {
            "metadata": {"name": "pod1"},
            "spec": {
                "containers": [
                    {"name": "foo", "another": [{"name": "value1"}, {"name": "value2"}]},
                    {"name": "bar", "another": [{"name": "value1"}, {"name": "value2"}]},
                ]
            },
        },
        {
            "metadata": {"name": "pod2"},
            "spec": {
                "containers": [{"name": "baz", "another": [{"name": "value1"}, {"name": "value2"}]}]
            },
        },
    ]
}

CONTAINERS = {"spec": {"containers": [{"name": f"fake{i}"} for i in range(4)]}}
SIX = {"spec": {"containers": [{"name": f"fake{i}"} for i in range(6)]}}

# (id, template, data, expected) with missing keys NOT allowed (client-go's default).
CASES = [
    ("boolSlice", "{ .bools }", TYPES, "[true,false,true,false]"),
    ("boolSliceIndex", "{ .bools[0] }", TYPES, "true"),
    ("boolSliceIndexLast", "{ .bools[-1] }", TYPES, "false"),
    ("boolSubSlice", "{ .bools[0:2] }", TYPES, "true false"),
    ("boolSubSliceFirst2", "{ .bools[:2] }", TYPES, "true false"),
    ("boolSubSliceStep2", "{ .bools[:4:2] }", TYPES, "true true"),
    ("integerSlice", "{ .integers }", TYPES, "[1,2,3,4]"),
    ("integerSliceIndexReverse", "{ .integers[-2] }", TYPES, "3"),
    ("integerSubSliceStep2", "{ .integers[:4:2] }", TYPES, "1 3"),
    ("floatSlice", "{ .floats }", TYPES, "[1,2.2,3.3,4]"),
    ("floatSliceIndex", "{ .floats[0] }", TYPES, "1"),
    ("floatSubSliceStep2", "{ .floats[:4:2] }", TYPES, "1 3.3"),
    ("stringSlice", "{ .strings }", TYPES, '["one","two","three","four"]'),
    ("stringSliceIndexReverse", "{ .strings[-2] }", TYPES, "three"),
    ("stringSubSliceStep2", "{ .strings[:4:2] }", TYPES, "one three"),
    ("interfaceSlice", "{ .interfaces }", TYPES, '[true,"one",1,1.1]'),
    ("interfaceSubSliceFirst2", "{ .interfaces[0:2] }", TYPES, "true one"),
    ("interfaceSubSliceStep2", "{ .interfaces[:4:2] }", TYPES, "true 1"),
    (
        "mapSlice",
        "{ .maps }",
        TYPES,
        '[{"name":"one","value":1},{"name":"two","value":2.02},{"name":"three","value":3.03},{"name":"four","value":4.04}]',
    ),
    ("mapSliceIndexReverse", "{ .maps[-2] }", TYPES, '{"name":"three","value":3.03}'),
    (
        "mapSubSliceStepOdd",
        "{ .maps[::2] }",
        TYPES,
        '{"name":"one","value":1} {"name":"three","value":3.03}',
    ),
    (
        "mapSubSliceStepEven",
        "{ .maps[1::2] }",
        TYPES,
        '{"name":"two","value":2.02} {"name":"four","value":4.04}',
    ),
    ("plain", "hello jsonpath", None, "hello jsonpath"),
    ("recursive", "{..}", [1, 2, 3], "[1,2,3]"),
    ("filter", "{[?(@<5)]}", [2, 6, 3, 7], "2 3"),
    ("quote", '{"{"}', None, "{"),
    ("union", "{[1,3,4]}", [0, 1, 2, 3, 4], "1 3 4"),
    ("array", "{[0:2]}", ["Monday", "Tudesday"], "Monday Tudesday"),
    ("variable", "hello {.Name}", STORE, "hello jsonpath"),
    ("dictSlash", "{$.Labels.web/html}", STORE, "15"),
    ("dictDollar", "{$.Employees.jason}", STORE, "manager"),
    ("dictDash", "{.Labels.k8s-app}", STORE, "20"),
    ("nest", "{.Bicycle[*].Color}", STORE, "red green"),
    ("allarray", "{.Book[*].Author}", STORE, "Nigel Rees Evelyn Waugh Herman Melville"),
    (
        "allfields",
        '{range .Bicycle[*]}{ "{" }{ @.* }{ "} " }{end}',
        STORE,
        "{red 19.95 true} {green 20.01 false} ",
    ),
    ("recurfields", "{..Price}", STORE, "8.95 12.99 8.99 19.95 20.01"),
    ("recurdotfields", "{...Price}", STORE, "8.95 12.99 8.99 19.95 20.01"),
    (
        "allstructsSlice",
        "{.Bicycle}",
        STORE,
        '[{"Color":"red","IsNew":true,"Price":19.95},{"Color":"green","IsNew":false,"Price":20.01}]',
    ),
    (
        "allstructs",
        '{range .Bicycle[*]}{ @ }{ " " }{end}',
        STORE,
        '{"Color":"red","IsNew":true,"Price":19.95} {"Color":"green","IsNew":false,"Price":20.01} ',
    ),
    (
        "lastarray",
        "{.Book[-1:]}",
        STORE,
        '{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}',
    ),
    (
        "recurarray",
        "{..Book[2]}",
        STORE,
        '{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}',
    ),
    ("bool", "{.Bicycle[?(@.IsNew==true)]}", STORE, '{"Color":"red","IsNew":true,"Price":19.95}'),
    ("exists filter", "{[?(@.z)].id}", POINTS, "i2 i5"),
    ("bracket key", "{[0]['id']}", POINTS, "i1"),
    ("nil value", "{[-1]['x']}", POINTS, "null"),
    (
        "range item",
        "{range .items[*]}{.metadata.name}, {end}{.kind}",
        NODES,
        "127.0.0.1, 127.0.0.2, List",
    ),
    (
        "range item with quote",
        '{range .items[*]}{.metadata.name}{"\\t"}{end}',
        NODES,
        "127.0.0.1\t127.0.0.2\t",
    ),
    (
        "range addresss",
        "{.items[*].status.addresses[*].address}",
        NODES,
        "127.0.0.1 127.0.0.2 127.0.0.3",
    ),
    (
        "double range",
        "{range .items[*]}{range .status.addresses[*]}{.address}, {end}{end}",
        NODES,
        "127.0.0.1, 127.0.0.2, 127.0.0.3, ",
    ),
    ("item name", "{.items[*].metadata.name}", NODES, "127.0.0.1 127.0.0.2"),
    (
        "union nodes capacity",
        "{.items[*]['metadata.name', 'status.capacity']}",
        NODES,
        '127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}',
    ),
    (
        "range nodes capacity",
        "{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}",
        NODES,
        '[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] ',
    ),
    ("user password", '{.users[?(@.name=="e2e")].user.password}', NODES, "secret"),
    ("hostname", "{.items[0].metadata.labels.kubernetes\\.io/hostname}", NODES, "127.0.0.1"),
    (
        "hostname filter",
        '{.items[?(@.metadata.labels.kubernetes\\.io/hostname=="127.0.0.1")].kind}',
        NODES,
        "None",
    ),
    ("bool item", "{.items[?(@..ready==true)].metadata.name}", NODES, "127.0.0.1"),
    (
        "nested range",
        '{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}',
        PODS,
        "pod1:foo,bar,+pod2:baz,+",
    ),
    (
        "nested range in nested range",
        '{range .items[*]}{.metadata.name}{"~"}{range @.spec.containers[*]}{.name}{":"}'
        '{range @.another[*]}{.name}{","}{end}{"+"}{end}{"#"}{end}',
        PODS,
        "pod1~foo:value1,value2,+bar:value1,value2,+#pod2~baz:value1,value2,+#",
    ),
    (
        "two nested ranges",
        '{range .items[*]}{.metadata.name}{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}'
        '{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\\n"}{end}',
        PODS,
        "pod1\tfoo bar \tfoo bar \npod2\tbaz \tbaz \n",
    ),
    ("containers[0]", "{.spec.containers[0].name}", CONTAINERS, "fake0"),
    ("containers[0:0]", "{.spec.containers[0:0].name}", CONTAINERS, ""),
    ("containers[0:-1]", "{.spec.containers[0:-1].name}", CONTAINERS, "fake0 fake1 fake2"),
    ("containers[-1]", "{.spec.containers[-1].name}", CONTAINERS, "fake3"),
    ("containers[-1:]", "{.spec.containers[-1:].name}", CONTAINERS, "fake3"),
    ("containers[-2:]", "{.spec.containers[-2:].name}", CONTAINERS, "fake2 fake3"),
    ("containers[-4]", "{.spec.containers[-4].name}", CONTAINERS, "fake0"),
    ("containers[-4:]", "{.spec.containers[-4:].name}", CONTAINERS, "fake0 fake1 fake2 fake3"),
    ("containers[5:5]", "{.spec.containers[5:5].name}", CONTAINERS, ""),
    ("containers[-5:-5]", "{.spec.containers[-5:-5].name}", CONTAINERS, ""),
    ("containers[0:6:5]", "{.spec.containers[0:6:5].name}", SIX, "fake0 fake5"),
    ("containers[0:6:6]", "{.spec.containers[0:6:6].name}", SIX, "fake0"),
    ("containers[1:4:2]", "{.spec.containers[1:4:2].name}", SIX, "fake1 fake3"),
    ("dollar root", "{$.spec.containers[0].name}", CONTAINERS, "fake0"),
    ("single quotes", "{'a\\'b'}", None, "a'b"),
    ("unicode escape", '{"\\u00e9\\x41"}', None, "éA"),
    ("html escaped like Go", "{.a}", {"a": {"k": "<&>"}}, '{"k":"\\u003c\\u0026\\u003e"}'),
    ("float like Go", "{.a} {.b} {.c}", {"a": 1e6, "b": 0.5, "c": 1e-5}, "1e+06 0.5 1e-05"),
    (
        "filter numbers",
        "{.items[?(@.n>=2)].id}",
        {"items": [{"id": "a", "n": 1}, {"id": "b", "n": 2.5}]},
        "b",
    ),
    ("filter not equal", '{.items[?(@.id!="a")].id}', {"items": [{"id": "a"}, {"id": "b"}]}, "b"),
]


@pytest.mark.parametrize(
    ("template", "data", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_template_prints_what_client_go_prints(template, data, expected):
    assert parse(template, allow_missing_keys=False).execute(data) == expected


def test_recursive_names_in_any_order():
    assert sorted(parse("{..name}").execute(NODES).split()) == [
        "127.0.0.1",
        "127.0.0.2",
        "e2e",
        "myself",
    ]


MISSING = [
    ("nonexistent field", "{.hello}", STORE, ""),
    ("nonexistent field 2", "before-{.hello}after", STORE, "before-after"),
    ("empty range", "{range .items[*]}{.metadata.name}{end}", {"items": []}, ""),
    (
        "empty nested range",
        '{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}',
        {"items": []},
        "",
    ),
    (
        "filter on sometimes missing annotations",
        '{.items[?(@.metadata.annotations.color=="blue")].metadata.name}',
        {
            "items": [
                {"metadata": {"name": "pod1", "annotations": {"color": "blue"}}},
                {"metadata": {"name": "pod2"}},
                {"metadata": {"name": "pod3", "annotations": {"color": "green"}}},
                {"metadata": {"name": "pod4", "annotations": {"color": "blue"}}},
            ]
        },
        "pod1 pod4",
    ),
]


@pytest.mark.parametrize(
    ("template", "data", "expected"), [c[1:] for c in MISSING], ids=[c[0] for c in MISSING]
)
def test_missing_keys_allowed_print_nothing(template, data, expected):
    assert parse(template).execute(data) == expected


FAILING = [
    ("invalid identifier", "{hello}", STORE, "unrecognized identifier hello"),
    ("nonexistent field", "{.hello}", STORE, "hello is not found"),
    ("invalid array", "{.Labels[0]}", STORE, "is not array or slice"),
    (
        "invalid filter operator",
        "{.Book[?(@.Price<>10)]}",
        STORE,
        "unrecognized filter operator <>",
    ),
    ("redundant end", "{range .Labels.*}{@}{end}{end}", STORE, "not in range, nothing to end"),
    (
        "containers[-1:0]",
        "{.spec.containers[-1:0].name}",
        CONTAINERS,
        "starting index 3 is greater than ending index 0",
    ),
    ("containers[-5]", "{.spec.containers[-5].name}", CONTAINERS, "array index out of bounds"),
    ("containers[3:1]", "{.spec.containers[3:1].name}", CONTAINERS, "starting index 3 is greater"),
    (
        "containers[-1:-2]",
        "{.spec.containers[-1:-2].name}",
        CONTAINERS,
        "starting index 3 is greater",
    ),
    (
        "filter on missing key, strict",
        '{.items[?(@.metadata.annotations.color=="blue")].metadata.name}',
        {"items": [{"metadata": {"name": "pod2"}}]},
        "annotations is not found",
    ),
    ("step zero", "{.spec.containers[::0].name}", CONTAINERS, "step must be > 0"),
    (
        "compare string with number",
        "{.items[?(@.a>1)]}",
        {"items": [{"a": "x"}]},
        "incompatible types",
    ),
]


@pytest.mark.parametrize(
    ("template", "data", "message"), [c[1:] for c in FAILING], ids=[c[0] for c in FAILING]
)
def test_evaluation_errors(template, data, message):
    with pytest.raises(JSONPathError, match=message.replace("[", r"\[")):
        parse(template, allow_missing_keys=False).execute(data)


# parser_test.go's failing templates, with the position kubectl users need to find the typo.
BAD = [
    ("unclosed action", "{.apiVersion", "unclosed action", 12),
    ("unrecognized character", "{*}", "unrecognized character in action", 1),
    ("invalid number", "{+12.3.0}", "cannot parse number", 1),
    ("unterminated array", "{[1}", "unterminated array", 1),
    ("unterminated filter", "{[?(.price]}", "unterminated filter", 1),
    ("invalid multiple recursive descent", "{......}", "invalid multiple recursive descent", 3),
    ("invalid array index", "{.a[x]}", "invalid array index x", 3),
    ("unterminated quote", '{"abc}', "unterminated quoted string", 1),
    (
        "superrecurfields",
        "{............................................................Price}",
        "invalid multiple recursive descent",
        3,
    ),
]


@pytest.mark.parametrize(
    ("template", "message", "position"), [c[1:] for c in BAD], ids=[c[0] for c in BAD]
)
def test_parse_errors_carry_the_position(template, message, position):
    with pytest.raises(JSONPathError) as caught:
        parse(template)
    assert message in caught.value.message
    assert caught.value.position == position
    assert str(caught.value).endswith(f"at {position}")


def test_jsonpath_as_json_prints_each_action_as_an_array():
    text = parse("{.items[*].metadata.name}").execute_json(NODES)
    assert json.loads(text) == ["127.0.0.1", "127.0.0.2"]
