// Package webui is `flower ui`: a local web page of a workspace's runs, one
// run's timeline, a running flow followed live (server-sent events over its
// events.jsonl) and, with a PostgreSQL store, the fleet's queue.
//
// It sits beside the command, above fleet: it reads what flow, harness and
// fleet record and changes nothing but a queued job's state (cancel,
// re-queue). The command injects the readings it shares with `flower runs`
// (Reader), so the page and the terminal cannot disagree.
//
// Safe by default: every request needs the random token the command prints
// with the URL (then a cookie), state-changing requests are POSTs that also
// check the Origin, html/template escapes every document and model text, a
// Content-Security-Policy allows only the page's own script, and a spilled
// file is served only from its run's spill folder.
package webui
