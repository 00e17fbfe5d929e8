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
	return []byte(b.String()), nil
}

func (g *generator) componentDecl(b *strings.Builder, name string) error {
	s := g.components[name]
	goName := g.goNames[name]
	comment(b, "", typeDoc(goName, s.Description, g.resultOf[name]))
	switch {
	case len(s.Enum) > 0 && enumType(s.Enum).expr == "string":
		fmt.Fprintf(b, "type %s string\n\n", goName)
		fmt.Fprintf(b, "// The values of %s.\nconst (\n", goName)
		for _, raw := range s.Enum {
			var value string
			if err := json.Unmarshal(raw, &value); err != nil {
				return err
			}
			constName := goName + exported(value)
			if err := g.claim(constName, fmt.Sprintf("the value %q of %s", value, name)); err != nil {
				return err
			}
			fmt.Fprintf(b, "\t%s %s = %q\n", constName, goName, value)
		}
		b.WriteString(")\n\n")
		return nil
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

func (g *generator) structDecl(b *strings.Builder, name string, s *schema, use usage) error {
	if len(s.Properties) == 0 {
		fmt.Fprintf(b, "type %s struct{}\n\n", name)
		return nil
	}
	fmt.Fprintf(b, "type %s struct {\n", name)
	fieldNames := map[string]string{}
	for _, p := range s.Properties {
		goField := exported(p.Name)
		if other, dup := fieldNames[goField]; dup {
			return fmt.Errorf("%s: fields %s and %s both become %s", name, other, p.Name, goField)
		}
		fieldNames[goField] = p.Name
		t := g.typeOf(p.Schema, name+goField, use)
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
	}
	return []byte(b.String()), nil
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
