"""Small templates exercising one engine feature each, rendered by make_golden.py with jinja2."""

# ---- engine features, one small template each (name, source, variables) --------------------

D = {"role": "user", "content": "hi", "n": 3, "f": 2.5, "none": None, "list": [3, 1, 2],
     "nested": {"a": {"b": [10, 20]}}}
MSGS = [{"role": "system", "content": "S"}, {"role": "user", "content": "U1"},
        {"role": "assistant", "content": "A1"}, {"role": "user", "content": "U2"}]

FEATURES = [
    # output and values
    ("literals", "{{ 1 }}|{{ -2 }}|{{ 1.5 }}|{{ 1e3 }}|{{ 'a' }}|{{ \"b\" }}|{{ true }}|{{ False }}"
                 "|{{ none }}|{{ [1, 'x', none, true, 2.0] }}|{{ {'k': 'v', 1: [2]} }}|{{ (1, 2) }}", {}),
    ("floats", "{{ 0.1 + 0.2 }}|{{ 1/3 }}|{{ 10/2 }}|{{ 1e16 }}|{{ 1e15 }}|{{ 0.0001 }}|{{ 0.00001 }}"
               "|{{ -0.0 }}|{{ 2**0.5 }}|{{ 1e300 * 1e300 }}|{{ 123456789.125 }}", {}),
    ("string_repr", "{{ ['it\\'s', 'a\"b', \"x'y\\\"z\", 'tab\\there', '\\x00\\x7f', 'é😀', '\\u200b\\xa0'] }}", {}),
    ("undefined_prints_empty", "[{{ missing }}][{{ d.missing }}][{{ none.x }}][{{ 'abc'.x }}][{{ d.list[9] }}]", {"d": D}),
    ("string_escapes", "{{ 'a\\tb\\nc\\\\d\\'e\\u00e9\\x41\\U0001F600\\101' }}|{{ 'x\\qy' }}", {}),
    ("adjacent_strings", "{{ 'a' 'b' \"c\" }}", {}),
    # whitespace control
    ("trim_lstrip_blocks", "  {% if true %}\n  x\n  {% endif %}\n  y  {% if true %}z{% endif %}\n", {}),
    ("dash_control", "a  {{- 'b' -}}  c\n  {%- if true -%}  d  {%- endif -%}\n  e", {}),
    ("plus_control", "  {%+ if true %}x{% endif +%}\ny\n  {%+ if true +%}\nz{% endif %}", {}),
    ("comments", "a  {#- c -#}  b {# c #}\nc\n   {# d #}\ne{#x#}f", {}),
    ("raw_block", "{% raw %}{{ not }} {% rendered %}{% endraw %}|\n  {% raw -%}  x  {%- endraw %}|", {}),
    ("crlf_and_trailing_newline", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\nc\n", {}),
    ("variable_no_trim", "{{ 'x' }}\n{{ 'y' }}\n", {}),
    ("comment_lstrip_trim", "a\n    {# comment #}\nb", {}),
    # conditions and expressions
    ("if_elif_else", "{% for x in [1, 2, 3, 4] %}{% if x == 1 %}one{% elif x == 2 %}two{% elif x > 3 %}big"
                     "{% else %}other{% endif %},{% endfor %}", {}),
    ("ternary", "{{ 'y' if d.n > 2 else 'n' }}|{{ 'y' if d.missing }}|{{ 'a' if false else 'b' if true else 'c' }}",
     {"d": D}),
    ("boolean_ops", "{{ 0 or 'b' }}|{{ 'a' and 'b' }}|{{ none and 1 }}|{{ not 0 }}|{{ not (1 and 0) }}"
                    "|{{ [] or {} or 'x' }}|{{ 1 and 2 or 3 }}", {}),
    ("comparisons", "{{ 1 < 2 < 3 }}|{{ 3 > 2 > 2 }}|{{ 1 == 1.0 }}|{{ true == 1 }}|{{ 'a' < 'b' }}"
                    "|{{ [1, 2] < [1, 3] }}|{{ 'a' != 'b' }}|{{ {'a': 1} == {'a': 1.0} }}|{{ none == none }}", {}),
    ("membership", "{{ 'x' in 'axb' }}|{{ 1 in [1.0] }}|{{ 'a' in {'a': 1} }}|{{ 'z' not in 'abc' }}"
                   "|{{ 'role' in d }}|{{ 'tool_calls' in d }}", {"d": D}),
    ("arithmetic", "{{ 7 // 2 }}|{{ -7 // 2 }}|{{ -7 % 3 }}|{{ 7 % -3 }}|{{ 7.5 % 2 }}|{{ -7.5 // 2 }}"
                   "|{{ 2 ** 10 }}|{{ 2 ** -1 }}|{{ -2 ** 2 }}|{{ 2 * 3 + 1 }}|{{ (2 + 3) * 4 }}"
                   "|{{ 1 + 2.5 }}|{{ true + 1 }}|{{ 10 - 2 - 3 }}|{{ 2 ** 3 ** 2 }}", {}),
    ("sequence_ops", "{{ [1, 2] + [3] }}|{{ 'ab' * 3 }}|{{ 2 * [0] }}|{{ 'a' + 'b' }}|{{ 'a' ~ 1 ~ none ~ missing ~ true }}", {}),
    ("percent_format", "{{ '%s-%d' % ('a', 3) }}|{{ '%s' % 'x' }}|{{ '%5s|%-5s|%.2s' % ('ab', 'cd', 'xyz') }}"
                       "|{{ '%.2f%%' % 12.345 }}|{{ '%x' % 255 }}", {}),
    ("subscripts_and_slices", "{{ d['role'] }}|{{ d.list[0] }}|{{ d.list[-1] }}|{{ d.nested.a.b[1] }}"
                              "|{{ d['nested']['a']['b'][0] }}|{{ d.list[1:] }}|{{ d.list[::-1] }}"
                              "|{{ d.list[:-1] }}|{{ d.list[::2] }}|{{ 'héllo'[1] }}|{{ 'héllo'[::-1] }}"
                              "|{{ 'héllo'[1:3] }}|{{ d.list[5:] }}|{{ 'abc'[-2:] }}|{{ d.list.0 }}", {"d": D}),
    ("dict_methods", "{{ d.items() | list | length }}|{% for k, v in d.nested.items() %}{{ k }}={{ v }}{% endfor %}"
                     "|{{ d.get('role') }}|{{ d.get('zz', 'dflt') }}|{{ d.get('zz') }}|{{ d.keys() | list }}"
                     "|{{ d.nested.values() | list }}|{{ d['items'] is defined }}", {"d": D}),
    ("string_methods", "{{ '  x y  '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '  a'.lstrip() }}|{{ 'a\\n\\n'.rstrip('\\n') }}"
                       "|{{ ' a  b '.split() }}|{{ 'a,b,,c'.split(',') }}|{{ 'a b c'.split(' ', 1) }}"
                       "|{{ 'a b c'.rsplit(' ', 1) }}|{{ 'abc'.startswith('ab') }}|{{ 'abc'.endswith(('x', 'c')) }}"
                       "|{{ 'Abc'.upper() }}|{{ 'ÀBC'.lower() }}|{{ \"they're bill's\".title() }}|{{ 'hELLO wORLD'.capitalize() }}"
                       "|{{ 'aaa'.replace('a', 'b', 2) }}|{{ 'abcabc'.find('c') }}|{{ 'abcabc'.rfind('c') }}"
                       "|{{ 'héé'.find('é') }}|{{ 'a-b'.count('-') }}|{{ '-'.join(['a', 'b']) }}"
                       "|{{ 'l1\\nl2\\r\\nl3'.splitlines() }}|{{ '123'.isdigit() }}|{{ 'ab1'.isalpha() }}", {}),
    ("str_format", "{{ '{}-{}'.format('a', 1) }}|{{ '{1}{0}'.format('x', 'y') }}|{{ '{n}!r={n!r}'.format(n='v') }}"
                   "|{{ '{{literal}}'.format() }}", {}),
    ("unicode_strip", "[{{ ('\\u3000\\xa0 x \\u2003\\n')|trim }}][{{ ' \\x85y\\u200b'.strip() }}]", {}),
    # loops
    ("loop_vars", "{% for x in ['a', 'b', 'c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
                  "{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}"
                  "[{{ loop.previtem }}|{{ loop.nextitem }}]{{ loop.cycle('o', 'e') }};{% endfor %}", {}),
    ("loop_filter_else", "{% for x in [1, 2, 3, 4] if x is even %}{{ x }}:{{ loop.index }}/{{ loop.length }}"
                         "{% else %}none{% endfor %}|{% for x in [] %}x{% else %}empty{% endfor %}"
                         "|{% for x in [1] if x > 5 %}x{% else %}filtered{% endfor %}", {}),
    ("loop_unpack", "{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }},{% endfor %}|{% for k, v in {'x': 1, 'y': 2}|items %}"
                    "{{ k }}{{ v }}{% endfor %}|{% for (a, b) in ['xy', 'zw'] %}{{ b }}{{ a }}{% endfor %}", {}),
    ("loop_over_dict_and_string", "{% for k in {'b': 1, 'a': 2} %}{{ k }}{% endfor %}|{% for c in 'hé😀' %}[{{ c }}]{% endfor %}", {}),
    ("nested_loops", "{% for i in range(3) %}{% for j in range(i) %}{{ i }}{{ j }}{{ loop.index }} {% endfor %}"
                     "({{ loop.index }}){% endfor %}", {}),
    ("loop_scoping", "{% set x = 1 %}{% for i in [1, 2] %}{{ x }}{% set x = i * 10 %}{{ x }}{% endfor %}{{ x }}"
                     "|{% for i in [1, 2] %}{% if i == 2 %}[{{ y }}]{% endif %}{% set y = 5 %}{% endfor %}"
                     "|{% if true %}{% set z = 3 %}{% endif %}{{ z }}", {}),
    ("namespace", "{% set ns = namespace(count=0, found=none) %}{% for m in msgs %}{% if m.role == 'user' %}"
                  "{% set ns.count = ns.count + 1 %}{% set ns.found = m.content %}{% endif %}{% endfor %}"
                  "{{ ns.count }} {{ ns.found }} {{ ns.missing is defined }}", {"msgs": MSGS}),
    ("break_continue", "{% for x in range(10) %}{% if x is odd %}{% continue %}{% endif %}{% if x > 6 %}"
                       "{% break %}{% endif %}{{ x }}{% endfor %}", {}),
    ("reverse_loop_last_index", "{% set ns = namespace(last=-1) %}{% for m in msgs[::-1] %}"
                                "{% set i = (msgs|length - 1) - loop.index0 %}{% if ns.last == -1 and m.role == 'user' %}"
                                "{% set ns.last = i %}{% endif %}{% endfor %}{{ ns.last }}", {"msgs": MSGS}),
    # set, macros, blocks
    ("set_forms", "{% set a, b = 1, 2 %}{{ a }}{{ b }}|{% set t = (3, 4) %}{{ t[1] }}|{% set blk %}  x{{ a }}  {% endset %}"
                  "[{{ blk }}]|{% set up | upper | trim %} hey {% endset %}[{{ up }}]", {}),
    ("macros", "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('A') }}"
               "|{{ greet('B', '?') }}|{{ greet(punct='.', name='C') }}|{% macro outer(x) %}<{{ greet(x) }}>{% endmacro %}"
               "{{ outer('D') }}", {}),
    ("macro_recursion", "{% macro render(v) %}{% if v is mapping %}{% for k, x in v.items() %}{{ k }}:{{ render(x) }};"
                        "{% endfor %}{% elif v is iterable and v is not string %}[{% for x in v %}{{ render(x) }}{% endfor %}]"
                        "{% else %}{{ v }}{% endif %}{% endmacro %}{{ render(d.nested) }}", {"d": D}),
    ("filter_block_and_with", "{% filter upper %}abc {{ 'd' }}{% endfilter %}|{% with a = 2, b = 3 %}{{ a * b }}{% endwith %}"
                              "|{% generation %}gen{% endgeneration %}", {}),
    # filters
    ("string_filters", "{{ '  x  '|trim }}|{{ 'xxhixx'|trim('x') }}|{{ 'aB'|upper }}|{{ 'aB'|lower }}"
                       "|{{ 'hello wORLD-foo(bar'|title }}|{{ 'hELLO'|capitalize }}|{{ 'aaa'|replace('a', 'b') }}"
                       "|{{ 'hello'|replace('l', 'L', 1) }}|{{ 5|string ~ 1 }}|{{ '<a href=\"x\">'|e }}|{{ 'x'|safe }}"
                       "|{{ 'ab'|center(6) }}|{{ 'a\\nb\\n\\nc'|indent(2) }}|{{ 'a\\nb'|indent(2, true) }}"
                       "|{{ 'a\\n\\nb'|indent('> ', blank=true) }}|{{ '%s=%s'|format('k', 1) }}", {}),
    ("unicode_case", "{{ 'éàß ÿ'|upper }}|{{ 'ÉÀ Ÿ ΣΑΣ ДОМ'|lower }}|{{ 'ñandú émile'|title }}", {}),
    ("number_filters", "{{ 1.5|int }}|{{ '42'|int }}|{{ ' 4_2 '|int }}|{{ 'x'|int }}|{{ 'x'|int(7) }}|{{ '3.7'|int }}"
                       "|{{ none|int }}|{{ '0x1f'|int(base=16) }}|{{ '2.5'|float }}|{{ 'x'|float }}|{{ 3|float }}"
                       "|{{ -3|abs }}|{{ -2.5|abs }}|{{ 2.5|round }}|{{ 3.5|round }}|{{ 2.675|round(2) }}"
                       "|{{ 3.14159|round(2, 'floor') }}|{{ 3.14159|round(1, 'ceil') }}|{{ 10|round }}", {}),
    ("default_filter", "{{ missing|default('d') }}|{{ ''|default('d') }}|{{ ''|default('d', true) }}|{{ none|default('d') }}"
                       "|{{ missing|d('x') }}|{{ 0|default(5, boolean=true) }}", {}),
    ("length_first_last", "{{ d.list|length }}|{{ 'héllo'|length }}|{{ d|count }}|{{ missing|length }}"
                          "|{{ d.list|first }}|{{ d.list|last }}|{{ 'abc'|first }}|{{ []|first }}|{{ 'xyz'|last }}", {"d": D}),
    ("join_list_items", "{{ [1, 2, 3]|join(', ') }}|{{ ['a', 'b']|join }}|{{ msgs|join('/', attribute='role') }}"
                        "|{{ 'abc'|list }}|{{ {'a': 1, 'b': 2}|items|list }}|{{ missing|items|list }}|{{ (1, 2)|list }}",
     {"msgs": MSGS}),
    ("select_reject", "{{ msgs|selectattr('role', 'equalto', 'user')|map(attribute='content')|join(',') }}"
                      "|{{ msgs|rejectattr('role', 'equalto', 'user')|list|length }}|{{ msgs|selectattr('role', 'eq', 'system')|first }}"
                      "|{{ [0, 1, 2, 3]|select('odd')|list }}|{{ [0, 1, '', 'x', none]|select|list }}"
                      "|{{ [1, 2, 3, 4]|reject('divisibleby', 2)|list }}|{{ [{'a': {'b': 1}}, {'a': {'b': 0}}]|selectattr('a.b')|list }}",
     {"msgs": MSGS}),
    ("map_filter", "{{ ['a', 'b']|map('upper')|join }}|{{ msgs|map(attribute='role')|unique|list }}"
                   "|{{ [{'x': 1}, {}]|map(attribute='x', default=0)|list }}|{{ ['1', '2']|map('int')|sum }}"
                   "|{{ [' a ', 'b ']|map('trim')|list }}|{{ [[1, 2], [3]]|map('length')|list }}", {"msgs": MSGS}),
    ("sort_unique_reverse", "{{ [3, 1, 2]|sort }}|{{ [3, 1, 2]|sort(reverse=true) }}|{{ ['b', 'A', 'c']|sort }}"
                            "|{{ ['b', 'A', 'c']|sort(case_sensitive=true) }}|{{ msgs|sort(attribute='content')|map(attribute='content')|join }}"
                            "|{{ ['a', 'A', 'b', 'a']|unique|list }}|{{ [1, 2, 3]|reverse|list }}|{{ 'abc'|reverse }}"
                            "|{{ {'b': 1, 'a': 2}|dictsort }}|{{ {'b': 1, 'a': 2}|dictsort(by='value', reverse=true) }}",
     {"msgs": MSGS}),
    ("sum_min_max", "{{ [1, 2, 3]|sum }}|{{ [1.5, 2]|sum }}|{{ [{'v': 2}, {'v': 5}]|sum(attribute='v') }}"
                    "|{{ [3, 1, 2]|min }}|{{ [3, 1, 2]|max }}|{{ ['b', 'A']|min }}|{{ []|max }}", {}),
    ("tojson_filter", "{{ d|tojson }}|{{ msgs[:2]|tojson(indent=2) }}|{{ {'b': 1, 'a': [true, none, 1.0]}|tojson(sort_keys=true) }}"
                      "|{{ 'é\"\\n\\t<>&'|tojson }}|{{ 'é'|tojson(ensure_ascii=true) }}|{{ [1, [2, []], {}]|tojson(indent=1) }}"
                      "|{{ {'a': 1}|tojson(separators=(',', ':')) }}|{{ {1: 'x', none: 2, true: 3}|tojson }}|{{ 1e20|tojson }}"
                      "|{{ '😀'|tojson(ensure_ascii=true) }}|{{ {'a': {'b': 1}}|tojson(indent='\\t') }}", {"d": D, "msgs": MSGS}),
    ("attr_filter", "{{ d|attr('role') }}|{{ ns_missing|attr('x') if false else 'ok' }}", {"d": D}),
    # tests
    ("tests", "{{ missing is defined }}{{ missing is undefined }}{{ none is none }}{{ 1 is number }}{{ true is number }}"
              "{{ 1.5 is float }}{{ 1 is integer }}{{ true is integer }}{{ 'a' is string }}{{ 1 is string }}"
              "{{ {} is mapping }}{{ [] is mapping }}{{ 'a' is iterable }}{{ 1 is iterable }}{{ [] is sequence }}"
              "{{ true is boolean }}{{ false is false }}{{ 0 is false }}{{ true is true }}{{ range is callable }}", {}),
    ("tests_with_args", "{{ 'hi' is equalto 'hi' }}{{ 1 is eq 1 }}{{ 2 is ne 1 }}{{ 1 is in [1] }}{{ 'b' is in 'abc' }}"
                        "{{ 3 is divisibleby 3 }}{{ 2 is odd }}{{ 2 is even }}{{ 'abc' is lower }}{{ 'ABC' is upper }}"
                        "{{ 5 is gt 3 }}{{ 5 is lessthan 3 }}{{ 2 is ge 2 }}{{ none is sameas none }}{{ 1 is not none }}"
                        "{{ 'x' is not equalto 'y' }}{{ (1 is number) and ('a' is string) }}{{ 'upper' is filter }}{{ 'odd' is test }}", {}),
    ("content_type_dispatch", "{% for m in msgs %}{% if m.content is string %}S{% elif m.content is iterable %}"
                              "{% for p in m.content %}{{ p.type }}{% endfor %}{% elif m.content is none %}N{% endif %}{% endfor %}",
     {"msgs": [{"content": "x"}, {"content": [{"type": "text"}, {"type": "image"}]}, {"content": None}]}),
    # globals
    ("range_dict_namespace", "{{ range(3)|list }}|{{ range(1, 10, 3)|list }}|{{ range(5, 0, -2)|list }}"
                             "|{{ dict(a=1, b='x') }}|{{ dict({'z': 1}, y=2) }}|{% set ns = namespace({'q': 1}, r=2) %}{{ ns.q }}{{ ns.r }}", {}),
    ("raise_exception", "before{{ raise_exception('custom failure: ' ~ 42) }}after", {}),
    ("unsafe_methods_undefined", "[{{ [].append }}][{{ [].append is defined }}][{{ {}.pop is defined }}][{{ d._x }}]",
     {"d": {"_x": 1}}),
    # runtime errors jinja2 raises (the engine must fail too)
    ("error_undefined_attr", "{{ missing.attr }}", {}),
    ("error_str_plus_int", "{{ 'a' + 1 }}", {}),
    ("error_none_plus", "{{ none + 1 }}", {}),
    ("error_undefined_plus", "{{ missing + 'a' }}", {}),
    ("error_call_undefined", "{{ nothing() }}", {}),
    ("error_not_callable", "{{ 'abc'() }}", {}),
    ("error_division_by_zero", "{{ 1 // 0 }}", {}),
    ("error_in_none", "{{ 1 in none }}", {}),
    ("error_iterate_int", "{% for x in 3 %}{% endfor %}", {}),
    ("error_compare_types", "{{ 1 < 'a' }}", {}),
    ("error_unknown_filter", "{{ 1|no_such_filter }}", {}),
    ("error_unknown_test", "{{ 1 is no_such_test }}", {}),
    ("error_tojson_undefined", "{{ missing|tojson }}", {}),
    ("error_set_attr_non_namespace", "{% set x = {} %}{% set x.a = 1 %}", {}),
    ("error_unpack", "{% for a, b in [[1, 2, 3]] %}{% endfor %}", {}),
    ("error_call_unsafe", "{{ [].append(1) }}", {}),
    ("error_length_of_int", "{{ 5|length }}", {}),
    ("error_range_too_big", "{{ range(1000000)|length }}", {}),
    ("unknown_filter_in_dead_branch", "{% if false %}{{ 1|no_such_filter }}{% endif %}ok", {}),
]
