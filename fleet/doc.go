// Package fleet queues starter flows in PostgreSQL and runs them on workers
// on any machine, on River (github.com/riverqueue/river v0.51.2, its pgx v5
// driver), in the same database as the session store.
//
// Lifecycle:
//
//  1. Open a postgres:// URL. The first Open of a database applies River's
//     migrations (rivermigrate, up to the version this River knows) and
//     fleet's own tables, in one transaction under an advisory lock; later
//     Opens find nothing to do. A newer flower with a newer River applies
//     River's newer migrations the same way on its first Open; going back
//     to an older River is not supported.
//  2. Queue: Add inserts one flow job (FlowArgs: the ask, where the work
//     happens, the starter's options) and returns its id; List, Get and
//     Cancel read and cancel jobs. A Fleet that only queues runs no worker.
//  3. Work: Fleet.Work runs one worker until its context ends — a River
//     client whose jobs are run by the caller's Runner, plus a lease: the
//     worker's row in flower_workers, renewed every leaseEvery(rescueAfter)
//     to expire rescueAfter from now on the database's clock. Every worker
//     also takes over: a running flow job whose worker's lease has expired is
//     made available again (or discarded when its attempts are spent), so
//     another worker resumes it. When ctx ends (SIGTERM) the worker stops
//     taking jobs, lets its flows finish within the grace period and hands
//     back the rest (River's JobSnooze(0): available at once, no attempt
//     spent), then expires its lease. A lost lease or an unreachable
//     database never ends Work: it stops the flows it may no longer hold,
//     says once a minute that it cannot reach the database, and takes
//     flows again when it can.
//
// Fencing: each job has a token (flower_fences.epoch), bumped when an
// attempt starts (claim) and when the flow is taken over. Every change the
// worker makes for an attempt is conditional on its token in the same
// transaction: River's own state changes carry it in the job's recorded
// output, and a trigger on river_job refuses (leaves as it was) a change
// of a running flow job without the current token; attempt rows and the
// session store (sessionstore.Store.SetFence) check it under FOR SHARE. A
// worker knows its lease deadline locally (send time of its last good
// renewal + rescueAfter, never after the database's expiry): when it
// passes, the worker stops its flows, and the deadline file
// (WorkOptions.DeadlineFile, child.DeadlineEnv) makes the flows'
// supervisors kill their claude even if the worker is stopped; takeover
// waits margin past the expiry. A verdict completes the job
// (river.JobCompleteTx) in the same fenced transaction as the attempt's
// end record.
//
// Outages: an attempt's records are retried with backoff for up to
// rescueAfter, then its end is spooled (WorkOptions.SpoolDir, private
// files) and replayed under its token when a worker starts there or its
// database comes back; the attempt's session store does the same with its
// writes (FlowRun.StoreOutbox, sessionstore.Store.SetOutbox). A worker's
// own running job that it no longer runs (River could not record its end)
// is handed back by its maintenance after rescueAfter; other workers'
// flows it takes over only once it has been back for rescueAfter, so that
// they, whose leases ran out in the same outage, renew first.
//  4. Close.
//
// Why not River's own rescuer: it looks only at a job's state and
// attempted_at, so it cannot tell a flow whose worker died from one that is
// still working after hours, and River requires its horizon to be at least
// the job timeout. So JobTimeout is -1 (a flow is bounded by its rounds and
// budget, not by a clock) and RescueStuckJobsAfter is a century: River never
// rescues a flow job, the lease decides. A live worker renews its lease, so
// its flows are never taken over however long they run. A worker that cannot
// renew its lease for longer than rescueAfter (a database it cannot reach)
// cancels its own flows before anyone else may take them.
//
// Documents (Restore before a flow, save at every new session, turn and
// step, Keep on a timer) keep a flow's brief, goal, Q&A log, handoffs and
// lineage in the session store under the flow's name (flowName), so a
// worker with a fresh checkout continues the flow where it stopped.
package fleet
