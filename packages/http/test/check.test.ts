/**
 * `HttpApi.check`: what a readiness probe asks (the reference server's
 * `GET /readyz`). It reads the store once, within a deadline of real time, and
 * never rejects.
 */
import { MemoryStore, Store, StoreError } from "@xaalis/engine"
import { makeHttpApi } from "@xaalis/http"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"

describe("HttpApi.check", () => {
  it("is ok when the store answers a read", async () => {
    const api = makeHttpApi({ store: MemoryStore.layer })
    try {
      expect(await api.check()).toStrictEqual({ ok: true })
    } finally {
      await api.dispose()
    }
  })

  it("is not ok, with the store's own words, when every read fails", async () => {
    const store = Layer.effect(
      Store,
      Effect.map(Effect.service(Store), (inner) =>
        Store.of({
          ...inner,
          transact: () => Effect.fail(new StoreError({ message: "reading failed: unreachable (ECONNREFUSED)" }))
        })
      )
    ).pipe(Layer.provide(MemoryStore.layer))
    const api = makeHttpApi({ store })
    try {
      const found = await api.check()
      expect(found).toStrictEqual({ ok: false, reason: "the store failed: reading failed: unreachable (ECONNREFUSED)" })
    } finally {
      await api.dispose()
    }
  })

  it("is not ok within its deadline when the store never answers (a database gone silent)", async () => {
    let silent = false
    let reads = 0
    const store = Layer.effect(
      Store,
      Effect.map(Effect.service(Store), (inner) =>
        Store.of({
          ...inner,
          transact: (work) => {
            if (!silent) return inner.transact(work)
            reads++
            return Effect.never
          }
        })
      )
    ).pipe(Layer.provide(MemoryStore.layer))
    const api = makeHttpApi({ store })
    try {
      await api.ready()
      // a request's unit of work that just completed shows the store answers: no read of check's own
      const created = await api.fetch(
        new Request("http://api.test/v1/test_helpers/businesses", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}"
        })
      )
      expect(created.status).toBe(201)
      silent = true
      expect(await api.check({ timeoutMs: 150 })).toStrictEqual({ ok: true })
      expect(reads).toBe(0)
      await new Promise((r) => setTimeout(r, 200))
      const started = performance.now()
      expect(await api.check({ timeoutMs: 150 })).toStrictEqual({
        ok: false,
        reason: "the store did not answer within 150 ms"
      })
      expect(performance.now() - started).toBeLessThan(1_000)
      // probes while that read still waits send no other one (each would hold a connection of the pool)
      for (let i = 0; i < 3; i++) expect((await api.check({ timeoutMs: 50 })).ok).toBe(false)
      expect(reads).toBe(1)
    } finally {
      // disposing interrupts the read still waiting
      await api.dispose()
    }
  })

  it("dispose and stopBackground return at once while the store is still being built (the build is stopped)", async () => {
    const api = makeHttpApi({ store: Layer.effect(Store, Effect.never) })
    const started = performance.now()
    await api.stopBackground()
    await api.dispose()
    expect(performance.now() - started).toBeLessThan(1_000)
  })

  it("is not ok when the store cannot be built, and once the API is disposed", async () => {
    const broken = makeHttpApi({
      store: Layer.effect(Store, Effect.fail(new StoreError({ message: "opening failed" })))
    })
    const found = await broken.check()
    expect(found.ok).toBe(false)
    expect(found.ok === false && found.reason).toContain("opening failed")
    await broken.dispose().catch(() => undefined)

    const api = makeHttpApi({ store: MemoryStore.layer })
    await api.dispose()
    expect(await api.check()).toStrictEqual({ ok: false, reason: "stopping" })
  })
})
