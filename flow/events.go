package flow

import (
	"reflect"
	"strings"
	"time"

	"github.com/flowerhq/flower/harness"
)

// eventOf is the workflow's event of kind for step, now, with payload (one
// of harness's typed payload structs) as its Data.
func eventOf(kind, step string, payload any) harness.Event {
	return harness.Event{Kind: kind, Step: step, Time: time.Now(), Data: dataOf(payload)}
}

// dataOf turns a payload struct into an Event's Data the way encoding/json
// names its fields (the json tag's name; "-" is left out; omitempty drops a
// zero value), keeping each value's Go type (an int stays an int, a
// []string a []string), so a live event reads as the map it replaced.
func dataOf(payload any) map[string]any {
	v := reflect.ValueOf(payload)
	t := v.Type()
	data := make(map[string]any, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if opts == "omitempty" && empty(v.Field(i)) {
			continue
		}
		data[name] = v.Field(i).Interface()
	}
	return data
}

// empty is encoding/json's omitempty test: false, 0, "", a nil pointer or
// interface, an empty array, slice or map.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	}
	return v.IsZero()
}
