package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// newCompletionCmd is `flower completion bash|zsh|fish`: a completion
// script for the shell, built from the command tree itself, so it offers
// exactly the commands and flags this flower has.
func newCompletionCmd(e *cmdEnv) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		ArgsUsage: "bash|zsh|fish",
		Description: `Examples:
   source <(flower completion bash)                     # in ~/.bashrc
   flower completion zsh > "${fpath[1]}/_flower"        # then restart zsh
   flower completion fish > ~/.config/fish/completions/flower.fish`,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("completion needs one shell: bash, zsh or fish")
			}
			return writeCompletion(e.Stdout, c.App, c.Args().First())
		},
	}
}

func writeCompletion(w io.Writer, app *cli.App, shell string) error {
	switch shell {
	case "bash":
		_, err := io.WriteString(w, bashCompletion(app))
		return err
	case "zsh":
		_, err := io.WriteString(w, "#compdef flower\n# flower's completion for zsh, through bash's.\nautoload -U +X bashcompinit && bashcompinit\n"+bashCompletion(app))
		return err
	case "fish":
		s, err := app.ToFishCompletion()
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, s)
		return err
	}
	return usagef("completion: %q is not bash, zsh or fish", shell)
}

// completionWords maps each command path (" runs show"; "" for flower
// itself) to what may follow it: its visible subcommands and its flags.
func completionWords(app *cli.App) map[string][]string {
	out := map[string][]string{}
	var walk func(path string, flags []cli.Flag, cmds []*cli.Command)
	walk = func(path string, flags []cli.Flag, cmds []*cli.Command) {
		var words []string
		for _, c := range cmds {
			if !c.Hidden {
				words = append(words, c.Name)
				walk(path+" "+c.Name, c.Flags, c.Subcommands)
			}
		}
		for _, f := range flags {
			for _, n := range f.Names() {
				words = append(words, dashed(n))
			}
		}
		out[path] = append(words, "--help")
	}
	walk("", app.Flags, app.Commands)
	return out
}

// bashCompletion is a bash completion function over completionWords: the
// words typed so far that name commands pick the path; flags and their
// values are skipped over.
func bashCompletion(app *cli.App) string {
	words := completionWords(app)
	paths := make([]string, 0, len(words))
	for p := range words {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var known, offer strings.Builder
	for _, p := range paths {
		if p != "" {
			fmt.Fprintf(&known, "    %q) path=\"$path $w\" ;;\n", p)
		}
		fmt.Fprintf(&offer, "    %q) words=%q ;;\n", p, strings.Join(words[p], " "))
	}
	return `# flower's completion for bash: source <(flower completion bash)
# Directories after -C, --workspace, --run-dir and --allow-dir; run ids after
# runs show and session ids after sessions show/report/export, from the
# manifest of the run dir the line names (flower __complete).
_flower() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" path="" words="" w i
  local -a place=()
  case "$prev" in
    -C|--workspace|--run-dir|--allow-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
  esac
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    case "$w" in
      -C|--workspace|--run-dir) place+=("$w" "${COMP_WORDS[i+1]}"); ((i++)); continue ;;
      --allow-dir) ((i++)); continue ;;
      -*) continue ;;
    esac
    case "$path $w" in
` + known.String() + `    esac
  done
  case "$path" in
` + offer.String() + `  esac
  if [[ $cur != -* ]]; then
    # flags only when a dash is typed: ids and commands are what's wanted
    local -a kept=()
    for w in $words; do [[ $w == -* ]] || kept+=("$w"); done
    words="${kept[*]}"
    case "$path" in
      " runs show") words="$words $(command flower __complete runs "${place[@]}" 2>/dev/null)" ;;
      " sessions show"|" sessions report"|" sessions export") words="$words $(command flower __complete sessions "${place[@]}" 2>/dev/null)" ;;
    esac
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _flower flower
`
}

// newManCmd is `flower man`: the manual page, generated from the same
// command tree (man <(flower man), or flower man > flower.1).
func newManCmd(e *cmdEnv) *cli.Command {
	return &cli.Command{
		Name:  "man",
		Usage: "print flower's manual page (roff): flower man | man -l -",
		Action: func(c *cli.Context) error {
			if err := noArgs(c, ""); err != nil {
				return err
			}
			page, err := c.App.ToManWithSection(1)
			if err != nil {
				return err
			}
			_, err = io.WriteString(e.Stdout, page)
			return err
		},
	}
}
