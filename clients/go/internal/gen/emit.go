package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

func (g *generator) typesFile() ([]byte, error) {
	var b strings.Builder
	b.WriteString(Header + "\n\npackage promptd\n\n")
	fmt.Fprintf(&b, "// ProtocolVersion is the protocol version of the document the types were generated from.\n")
	fmt.Fprintf(&b, "const ProtocolVersion = %q\n\n", g.doc.ProtocolVersion)
	if err := g.claim("ProtocolVersion", "the protocol version"); err != nil {
		return nil, err
	}

	b.WriteString("// SpecMethods lists every method of the document, notifications included.\n")
	b.WriteString("var SpecMethods = []string{\n")
	for _, m := range g.doc.Methods {
		fmt.Fprintf(&b, "\t%q,\n", m.Name)
	}
	b.WriteString("}\n\n")
	if err := g.claim("SpecMethods", "the method list"); err != nil {
		return nil, err
	}

	for _, m := range g.callable() {
		if len(m.Params) == 0 {
			continue
		}
		name := exported(m.Name) + "Params"
		if err := g.claim(name, "the params of "+m.Name); err != nil {
			return nil, err
		}
		s := &schema{Types: []string{"object"}, Required: map[string]bool{}}
		for _, p := range m.Params {
			sub, err := parseSchema(p.Schema)
			if err != nil {
				return nil, err
			}
			s.Properties = append(s.Properties, property{Name: p.Name, Schema: sub})
			s.Required[p.Name] = p.Required
		}
		comment(&b, "", fmt.Sprintf("%s are the params of %q.", name, m.Name))
		if err := g.structDecl(&b, name, s, input); err != nil {
			return nil, err
		}
	}

	for _, name := range sortedKeys(g.usages) {
		if err := g.componentDecl(&b, name); err != nil {
			return nil, err
		}
	}
	if err := g.errorsDecl(&b); err != nil {
		return nil, err
	}
	if err := g.eventsDecl(&b); err != nil {
		return nil, err
	}

	// Inline object types are found while the others are written; each may reveal more.
	seen := map[string]bool{}
	for i := 0; i < len(g.inline); i++ {
		t := g.inline[i]
		if seen[t.name] {
			continue
		}
		seen[t.name] = true
		if err := g.claim(t.name, "an inline object"); err != nil {
			return nil, err
		}
		comment(&b, "", typeDoc(t.name, t.schema.Description, nil))
		if err := g.structDecl(&b, t.name, t.schema, t.use); err != nil {
			return nil, err
		}
	}
	// Inline enums, found while the others were written.
	seenEnum := map[string]string{}
	for _, e := range g.enums {
		key := fmt.Sprint(e.values)
		if prev, ok := seenEnum[e.name]; ok {
			if prev != key {
				return nil, fmt.Errorf("two different enums would both be named %s", e.name)
			}
			continue
		}
		seenEnum[e.name] = key
		if err := g.claim(e.name, "an inline enum"); err != nil {
			return nil, err
		}
		if err := g.enumDecl(&b, e.name, e.name, e.values); err != nil {
			return nil, err
		}
	}
	seenOneOf := map[string]bool{}
	for _, u := range g.oneOfs {
		if seenOneOf[u.name] {
			continue
		}
		seenOneOf[u.name] = true
		if err := g.claim(u.name, "a union of alternatives"); err != nil {
			return nil, err
		}
		oneOfDecl(&b, u)
	}
	if g.boolOrList {
		if err := g.claim("BoolOrList", "the true/false-or-list helper"); err != nil {
			return nil, err
		}
		b.WriteString(boolOrListSource)
	}
	src := b.String()
	var imports []string
	for _, pkg := range []string{"encoding/json", "fmt"} {
		if strings.Contains(src, pkg[strings.LastIndex(pkg, "/")+1:]+".") {
			imports = append(imports, fmt.Sprintf("%q", pkg))
		}
	}
	if len(imports) > 0 {
		src = strings.Replace(src, "package promptd\n", "package promptd\n\nimport (\n"+strings.Join(imports, "\n")+"\n)\n", 1)
	}
	return []byte(src), nil
}

// oneOfDecl writes a union's struct, and the JSON methods that write the one alternative set
// and read a string or an object into the alternative it is.
func oneOfDecl(b *strings.Builder, u oneOf) {
	var fields, names, keys []string
	if u.str != nil {
		fields = append(fields, "Name "+u.str.expr)
		names = append(names, "Name")
	}
	for _, o := range u.objects {
		fields = append(fields, o.goName+" *"+o.goName)
		names = append(names, o.goName)
		keys = append(keys, o.key)
	}
	list := strings.Join(names, ", ")
	fmt.Fprintf(b, "// %s is one of several shapes: set exactly one of %s.\n", u.name, list)
	if u.str != nil {
		b.WriteString("// Name is the string form; each other field is the object form of that name.\n")
	}
	fmt.Fprintf(b, "type %s struct {\n\t%s\n}\n\n", u.name, strings.Join(fields, "\n\t"))

	b.WriteString("// MarshalJSON writes the one alternative that is set (an error when none or several are).\n")
	fmt.Fprintf(b, "func (v %s) MarshalJSON() ([]byte, error) {\n\tset, out := 0, any(nil)\n", u.name)
	if u.str != nil {
		b.WriteString("\tif v.Name != \"\" {\n\t\tset, out = set+1, v.Name\n\t}\n")
	}
	for _, o := range u.objects {
		fmt.Fprintf(b, "\tif v.%s != nil {\n\t\tset, out = set+1, v.%s\n\t}\n", o.goName, o.goName)
	}
	fmt.Fprintf(b, "\tif set != 1 {\n\t\treturn nil, fmt.Errorf(\"promptd: %s: set exactly one of %s (%%d are set)\", set)\n\t}\n", u.name, list)
	b.WriteString("\treturn json.Marshal(out)\n}\n\n")

	fmt.Fprintf(b, "// UnmarshalJSON reads a string into Name and an object into the alternative its fields name (%s).\n", strings.Join(keys, ", "))
	fmt.Fprintf(b, "func (v *%s) UnmarshalJSON(data []byte) error {\n\t*v = %s{}\n", u.name, u.name)
	if u.str != nil {
		b.WriteString("\tif len(data) > 0 && data[0] == '\"' {\n\t\treturn json.Unmarshal(data, &v.Name)\n\t}\n")
	}
	b.WriteString("\tvar fields map[string]json.RawMessage\n\tif err := json.Unmarshal(data, &fields); err != nil {\n\t\treturn err\n\t}\n")
	for _, o := range u.objects {
		fmt.Fprintf(b, "\tif _, ok := fields[%q]; ok {\n\t\tv.%s = new(%s)\n\t\treturn json.Unmarshal(data, v.%s)\n\t}\n", o.key, o.goName, o.goName, o.goName)
	}
	fmt.Fprintf(b, "\treturn fmt.Errorf(\"promptd: %s: an object with none of the fields %s\")\n}\n\n", u.name, strings.Join(keys, ", "))
}

// boolOrListSource is the helper for a value that is true/false or a list (capabilities.events:
// true for every event, or the names wanted).
const boolOrListSource = `// BoolOrList is a JSON value that is either true/false or a list: List when it is not nil,
// else All. (capabilities.events: BoolOrList[EventName]{All: true} for every event, or
// {List: []EventName{EventGateFired}} for some.)
type BoolOrList[T any] struct {
	All  bool
	List []T
}

// MarshalJSON writes List when it is not nil, else All.
func (v BoolOrList[T]) MarshalJSON() ([]byte, error) {
	if v.List != nil {
		return json.Marshal(v.List)
	}
	return json.Marshal(v.All)
}

// UnmarshalJSON reads true/false into All, a list into List.
func (v *BoolOrList[T]) UnmarshalJSON(data []byte) error {
	*v = BoolOrList[T]{}
	if err := json.Unmarshal(data, &v.All); err == nil {
		return nil
	}
	return json.Unmarshal(data, &v.List)
}

`

// errorsDecl writes a constant per error code and the code of each data.kind.
func (g *generator) errorsDecl(b *strings.Builder) error {
	if len(g.doc.Errors) == 0 {
		return nil
	}
	b.WriteString("// Every error code on the wire: JSON-RPC 2.0's, LSP's cancel code and promptd's application codes\n")
	b.WriteString("// (-32000..-32099). Branch on the code and on data.kind (Error.Kind), never on the message.\n")
	b.WriteString("const (\n")
	for _, e := range g.doc.Errors {
		name := "Code" + exported(e.Name)
		if err := g.claim(name, fmt.Sprintf("the error code %d", e.Code)); err != nil {
			return err
		}
		text := e.Message
		if len(e.Kinds) > 0 {
			kinds := make([]string, len(e.Kinds))
			for i, k := range e.Kinds {
				kinds[i] = k.Kind
			}
			text += " (data.kind: " + strings.Join(kinds, ", ") + ")"
		}
		comment(b, "\t", name+": "+text)
		fmt.Fprintf(b, "\t%s = %d\n", name, e.Code)
	}
	b.WriteString(")\n\n")
	kindType := "string"
	if g.goNames["ErrorKind"] != "" {
		kindType = g.goNames["ErrorKind"]
	}
	if err := g.claim("ErrorKindCode", "the code of each error kind"); err != nil {
		return err
	}
	b.WriteString("// ErrorKindCode is the code each data.kind comes with.\n")
	fmt.Fprintf(b, "var ErrorKindCode = map[%s]int64{\n", kindType)
	for _, e := range g.doc.Errors {
		for _, k := range e.Kinds {
			fmt.Fprintf(b, "\t%q: %d,\n", k.Kind, e.Code)
		}
	}
	b.WriteString("}\n\n")
	return nil
}

// eventsDecl writes the decoding of each event notification's payload into its generated type.
func (g *generator) eventsDecl(b *strings.Builder) error {
	var events []method
	for _, m := range g.doc.ServerToClient {
		if m.Result == nil {
			events = append(events, m)
		}
	}
	if len(events) == 0 {
		return nil
	}
	if err := g.claim("decodeEvent", "the event decoder"); err != nil {
		return err
	}
	b.WriteString("// decodeEvent decodes an event notification's params into its payload type (GateFiredEvent, ...);\n")
	b.WriteString("// nil and no error for an event newer than these types.\n")
	b.WriteString("func decodeEvent(method string, params json.RawMessage) (any, error) {\n\tswitch method {\n")
	for _, m := range events {
		s, err := g.paramsModel(m)
		if err != nil {
			return err
		}
		goName := g.goNames[refName(s.Ref)]
		fmt.Fprintf(b, "\tcase %q:\n\t\tvar payload %s\n\t\terr := json.Unmarshal(params, &payload)\n\t\treturn payload, err\n", m.Name, goName)
	}
	b.WriteString("\t}\n\treturn nil, nil\n}\n\n")
	return nil
}

func (g *generator) componentDecl(b *strings.Builder, name string) error {
	s := g.components[name]
	goName := g.goNames[name]
	comment(b, "", typeDoc(goName, s.Description, g.resultOf[name]))
	switch {
	case len(s.Enum) > 0 && enumType(s.Enum).expr == "string":
		return g.enumDecl(b, name, goName, s.Enum)
	case isStruct(s):
		return g.structDecl(b, goName, s, g.usages[name])
	}
	inner := g.typeOf(s, goName, g.usages[name])
	if inner.expr == goName {
		inner.expr = "any" // a self-reference would not compile; it never happens with pydantic
	}
	if len(s.Properties) > 0 {
		// Fixed fields plus any others: kept as a map so that the others survive.
		fields := make([]string, 0, len(s.Properties))
		for _, p := range s.Properties {
			fields = append(fields, p.Name)
		}
		comment(b, "", fmt.Sprintf("Known fields: %s.", strings.Join(fields, ", ")))
	}
	fmt.Fprintf(b, "type %s = %s\n\n", goName, inner.expr)
	return nil
}

// enumDecl declares a named string type and a constant per value: the type's name and the value
// (ScopePerTurn), or the value alone when it already starts with the type's first word
// (EventName "event/gate_fired" -> EventGateFired).
func (g *generator) enumDecl(b *strings.Builder, name, goName string, values []json.RawMessage) error {
	fmt.Fprintf(b, "type %s string\n\n", goName)
	fmt.Fprintf(b, "// The values of %s.\nconst (\n", goName)
	first := ""
	if w := words(goName); len(w) > 1 {
		first = w[0]
	}
	for _, raw := range values {
		var value string
		if err := json.Unmarshal(raw, &value); err != nil {
			return err
		}
		constName := goName + exported(value)
		if v := exported(value); first != "" && strings.HasPrefix(v, first) && len(v) > len(first) {
			constName = v
		}
		if err := g.claim(constName, fmt.Sprintf("the value %q of %s", value, name)); err != nil {
			return err
		}
		fmt.Fprintf(b, "\t%s %s = %q\n", constName, goName, value)
	}
	b.WriteString(")\n\n")
	return nil
}

// typeParam is a type parameter of a generic struct: a field marked x-caller-type.
type typeParam struct {
	name     string
	fallback string // the type the non-generic alias instantiates it with
}

// typeParams lists a struct's type parameters, in field order, one per x-caller-type name.
func (g *generator) typeParams(name string, s *schema, use usage) []typeParam {
	var out []typeParam
	seen := map[string]bool{}
	for _, p := range s.Properties {
		if p.Schema.CallerType == "" || seen[p.Schema.CallerType] {
			continue
		}
		seen[p.Schema.CallerType] = true
		plain := *p.Schema
		plain.CallerType = ""
		replaced := &plain
		if isArray(&plain) {
			replaced = plain.Items
		}
		out = append(out, typeParam{name: p.Schema.CallerType, fallback: g.typeOf(replaced, name+exported(p.Name), use).expr})
	}
	return out
}

func isArray(s *schema) bool {
	types, _ := withoutNull(s.Types)
	return len(types) == 1 && types[0] == "array" && s.Items != nil
}

// genericName is the generic form of a struct with type parameters: HistorySanitizeParamsOf.
func genericName(name string) string { return name + "Of" }

// structDecl declares a struct. One with x-caller-type fields is declared generic
// (HistorySanitizeParamsOf[Message any]), and its plain name is an alias of it instantiated with
// the schema's own types, so that code written against the plain struct still compiles.
func (g *generator) structDecl(b *strings.Builder, name string, s *schema, use usage) error {
	if len(s.Properties) == 0 {
		fmt.Fprintf(b, "type %s struct{}\n\n", name)
		return nil
	}
	params := g.typeParams(name, s, use)
	if len(params) > 0 {
		generic := genericName(name)
		if err := g.claim(generic, "the generic form of "+name); err != nil {
			return err
		}
		names, fallbacks := make([]string, len(params)), make([]string, len(params))
		for i, p := range params {
			names[i], fallbacks[i] = p.name+" any", p.fallback
		}
		defer fmt.Fprintf(b, "// %s is %s with the schema's own types.\ntype %s = %s[%s]\n\n", name, generic, name, generic, strings.Join(fallbacks, ", "))
		b.WriteString("//\n// " + strings.Join(paramNames(params), ", ") + ": the caller's own type (an SDK's messages, a tool result), sent as JSON and\n// decoded from the answer into the same type.\n")
		fmt.Fprintf(b, "type %s[%s] struct {\n", generic, strings.Join(names, ", "))
	} else {
		fmt.Fprintf(b, "type %s struct {\n", name)
	}
	fieldNames := map[string]string{}
	for _, p := range s.Properties {
		goField := exported(p.Name)
		if other, dup := fieldNames[goField]; dup {
			return fmt.Errorf("%s: fields %s and %s both become %s", name, other, p.Name, goField)
		}
		fieldNames[goField] = p.Name
		t := g.typeOf(p.Schema, name+goField, use)
		if p.Schema.CallerType != "" {
			t = gotype{expr: p.Schema.CallerType, nilable: true}
			if isArray(p.Schema) {
				t.expr = "[]" + t.expr
			}
		}
		expr, tag := field(t, s.Required[p.Name], p.Schema.Default, use)
		comment(b, "\t", describe(p.Schema))
		fmt.Fprintf(b, "\t%s %s `json:\"%s%s\"`\n", goField, expr, p.Name, tag)
	}
	b.WriteString("}\n\n")
	return nil
}

// describe is a field's comment: its description, and its default when it has one, since a Go
// zero value may stand for "use the default".
func describe(s *schema) string {
	text := s.Description
	if s.Default != nil && string(s.Default) != "null" {
		if text != "" {
			text += "\n"
		}
		text += "Default: " + string(s.Default) + "."
	}
	return text
}

func (g *generator) methodsFile() ([]byte, error) {
	var b strings.Builder
	b.WriteString(Header + "\n\npackage promptd\n\nimport \"context\"\n\n")
	for _, m := range g.callable() {
		name := exported(m.Name)
		if g.methods[name] {
			return nil, fmt.Errorf("the wrapper %s for %s clashes with a hand-written Client method", name, m.Name)
		}
		resultSchema, err := parseSchema(m.Result.Schema)
		if err != nil {
			return nil, err
		}
		result := g.typeOf(resultSchema, name+"Result", output)
		// A result with no fields ({}) is only a success signal: the wrapper returns just the error.
		empty := false
		if c := g.components[refName(resultSchema.Ref)]; resultSchema.Ref != "" && c != nil {
			empty = len(c.Properties) == 0 && !c.FreeForm && c.Additional == nil && len(c.AnyOf) == 0 && len(c.Enum) == 0
		}

		args, send := "ctx context.Context", "nil"
		if len(m.Params) > 0 {
			args += ", params " + name + "Params"
			send = "params"
		}
		summary := strings.TrimSpace(m.Summary)
		if summary == "" {
			summary = "Calls " + m.Name + "."
		}
		fmt.Fprintf(&b, "// %s calls %q: %s\n", name, m.Name, strings.ReplaceAll(summary, "\n", "\n// "))
		if empty {
			fmt.Fprintf(&b, "func (c *Client) %s(%s) error {\n\treturn c.Call(ctx, %q, %s, nil)\n}\n\n", name, args, m.Name, send)
			continue
		}
		fmt.Fprintf(&b, "func (c *Client) %s(%s) (%s, error) {\n", name, args, result.expr)
		fmt.Fprintf(&b, "\tvar result %s\n\terr := c.Call(ctx, %q, %s, &result)\n\treturn result, err\n}\n\n", result.expr, m.Name, send)
		if err := g.genericWrapper(&b, m, name, resultSchema); err != nil {
			return nil, err
		}
	}
	return []byte(b.String()), nil
}

// genericWrapper writes, for a method with x-caller-type params, a generic function beside the
// method (Go methods cannot have type parameters): HistorySanitizeOf[Message] sends the caller's
// own messages and decodes the answer's into the same type.
func (g *generator) genericWrapper(b *strings.Builder, m method, name string, resultSchema *schema) error {
	s := &schema{Types: []string{"object"}}
	for _, p := range m.Params {
		sub, err := parseSchema(p.Schema)
		if err != nil {
			return err
		}
		s.Properties = append(s.Properties, property{Name: p.Name, Schema: sub})
	}
	params := g.typeParams(name+"Params", s, input)
	if len(params) == 0 {
		return nil
	}
	component := g.components[refName(resultSchema.Ref)]
	if resultSchema.Ref == "" || component == nil {
		return fmt.Errorf("%s: x-caller-type params need a named result model", m.Name)
	}
	own := paramNames(g.typeParams(g.goNames[refName(resultSchema.Ref)], component, output))
	if strings.Join(own, ",") != strings.Join(paramNames(params), ",") {
		return fmt.Errorf("%s: the result's type parameters %v are not the params' %v", m.Name, own, paramNames(params))
	}
	function := genericName(name)
	if err := g.claim(function, "the generic wrapper of "+m.Name); err != nil {
		return err
	}
	names := paramNames(params)
	declared := strings.Join(names, " any, ") + " any"
	args := strings.Join(names, ", ")
	result := genericName(g.goNames[refName(resultSchema.Ref)]) + "[" + args + "]"
	fmt.Fprintf(b, "// %s calls %q with %s, the caller's own type (an SDK's own message type, which\n", function, m.Name, strings.Join(names, ", "))
	fmt.Fprintf(b, "// must encode to and decode from JSON), and decodes the answer into the same type. %s is\n// the same call with the protocol's own types.\n", name)
	fmt.Fprintf(b, "func %s[%s](ctx context.Context, c *Client, params %s[%s]) (%s, error) {\n", function, declared, genericName(name+"Params"), args, result)
	fmt.Fprintf(b, "\tvar out %s\n\terr := c.Call(ctx, %q, params, &out)\n\treturn out, err\n}\n\n", result, m.Name)
	return nil
}

func paramNames(params []typeParam) []string {
	out := make([]string, len(params))
	for i, p := range params {
		out[i] = p.name
	}
	return out
}

// typeDoc is a type's comment: the model's own description, or where the type is used.
func typeDoc(goName, description string, resultOf []string) string {
	if strings.TrimSpace(description) != "" {
		return description
	}
	if len(resultOf) > 0 {
		quoted := make([]string, len(resultOf))
		for i, m := range resultOf {
			quoted[i] = fmt.Sprintf("%q", m)
		}
		return fmt.Sprintf("%s is the result of %s.", goName, strings.Join(quoted, ", "))
	}
	return fmt.Sprintf("%s is a type of the promptd protocol (see protocol/openrpc.json).", goName)
}
