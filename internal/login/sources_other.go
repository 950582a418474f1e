//go:build !darwin

package login

// platformSources off macOS: the file only.
func platformSources(configDir string, _ func(string) string) []Source {
	return []Source{File{Dir: configDir}}
}
