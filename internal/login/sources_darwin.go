package login

// platformSources on macOS: see darwinSources.
func platformSources(configDir string, getenv func(string) string) []Source {
	return darwinSources(configDir, getenv)
}
