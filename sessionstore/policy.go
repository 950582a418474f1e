package sessionstore

// TrimPolicy: plain-text tool results longer than
// MinChars, outside the last KeepRecent turns, are moved to
// <workspace>/<SpillDirname>/ on load and replaced by a pointer.
type TrimPolicy struct {
	KeepRecent   int    `json:"keep_recent"`
	MinChars     int    `json:"min_chars"`
	SpillDirname string `json:"spill_dirname"`
	Enabled      bool   `json:"enabled"`
	// PreviewChars is how much of the original text follows the pointer line
	// (0 = pointer only).
	PreviewChars int `json:"preview_chars"`
}

// DefaultTrimPolicy: keep_recent 20, min_chars 2000, spill_dirname
// ".flower/spill", enabled, a 300-character preview.
func DefaultTrimPolicy() TrimPolicy {
	return TrimPolicy{KeepRecent: 20, MinChars: 2000, SpillDirname: ".flower/spill", Enabled: true, PreviewChars: 300}
}

// EphemeralPolicy: results of Bash commands that
// glance.IsEphemeral accepts, at most MaxChars long and outside the last
// KeepRecent turns, are replaced on load by Text, with {cmd} and {age}
// filled in. The old content is dropped, not spilled. Read is exempt.
type EphemeralPolicy struct {
	Enabled    bool   `json:"enabled"`
	KeepRecent int    `json:"keep_recent"`
	MaxChars   int    `json:"max_chars"`
	Text       string `json:"text"`
}

// DefaultEphemeralText is the expiry text the model reads, byte-exact
// ("the result of {cmd} expired {age} turns ago, the state may have
// changed; run it again if needed").
const DefaultEphemeralText = "[{cmd} 的结果已过期(第 {age} 轮前),当前状态可能已变。需要请重新执行]"

// DefaultEphemeralPolicy: enabled, keep_recent 6,
// max_chars 2000, DefaultEphemeralText.
func DefaultEphemeralPolicy() EphemeralPolicy {
	return EphemeralPolicy{Enabled: true, KeepRecent: 6, MaxChars: 2000, Text: DefaultEphemeralText}
}

// PrunePolicy: only the last KeepDenials permission
// denials stay in a resumed transcript; KeepDenials < 0 keeps them all.
type PrunePolicy struct {
	KeepDenials int `json:"keep_denials"`
}

// DefaultPrunePolicy keeps the last denial: keep_denials 1.
func DefaultPrunePolicy() PrunePolicy { return PrunePolicy{KeepDenials: 1} }

// RepairText is the content of the synthetic tool_result given to a tool_use
// that never got one (the session was interrupted or crashed mid-call).
// Chinese, in the style of DefaultEphemeralText.
const RepairText = "[这次工具调用没有返回结果:它执行时会话被打断或崩溃了,结果未知。依赖它之前请先检查当前状态]"

// TrimReport says what the last load pipeline did; sizes are in bytes of JSON text.
type TrimReport struct {
	Transcripts  int `json:"transcripts"`   // transcripts loaded (main + subagents)
	Entries      int `json:"entries"`       // entries loaded
	BytesIn      int `json:"bytes_in"`      // their size as stored
	BytesOut     int `json:"bytes_out"`     // their size after the pipeline
	Expired      int `json:"expired"`       // ephemeral results replaced by the policy text
	ExpiredBytes int `json:"expired_bytes"` // bytes of result text dropped by expiry
	Trimmed      int `json:"trimmed"`       // results moved to spill files
	TrimmedBytes int `json:"trimmed_bytes"` // bytes of result text moved out
	SpillFiles   int `json:"spill_files"`   // spill files newly written
	Pruned       int `json:"pruned"`        // permission denials removed
	PrunedLines  int `json:"pruned_lines"`  // transcript lines removed with them
	Repaired     int `json:"repaired"`      // orphan tool_uses given a synthetic result
}

// Map is the report as a name → count map (the JSON keys).
func (r TrimReport) Map() map[string]int {
	return map[string]int{
		"transcripts": r.Transcripts, "entries": r.Entries, "bytes_in": r.BytesIn, "bytes_out": r.BytesOut,
		"expired": r.Expired, "expired_bytes": r.ExpiredBytes, "trimmed": r.Trimmed, "trimmed_bytes": r.TrimmedBytes,
		"spill_files": r.SpillFiles, "pruned": r.Pruned, "pruned_lines": r.PrunedLines, "repaired": r.Repaired,
	}
}

func (r *TrimReport) add(o TrimReport) {
	r.Transcripts += o.Transcripts
	r.Entries += o.Entries
	r.BytesIn += o.BytesIn
	r.BytesOut += o.BytesOut
	r.Expired += o.Expired
	r.ExpiredBytes += o.ExpiredBytes
	r.Trimmed += o.Trimmed
	r.TrimmedBytes += o.TrimmedBytes
	r.SpillFiles += o.SpillFiles
	r.Pruned += o.Pruned
	r.PrunedLines += o.PrunedLines
	r.Repaired += o.Repaired
}
