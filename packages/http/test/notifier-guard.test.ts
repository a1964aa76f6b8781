import type { LookupAddress } from "node:dns"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { AddressGuard } from "../src/notifier/index.ts"

const runs = (base: number): number => (process.env.XAALIS_DEEP === "1" ? base * 50 : base)

const { checkUrl, classify, pinnedLookup, vetAddress } = AddressGuard

describe("AddressGuard.classify", () => {
  it("names the category of every special range, IPv4 and IPv6", () => {
    const table: ReadonlyArray<readonly [string, AddressGuard.AddressCategory | undefined]> = [
      ["0.0.0.0", "unspecified"],
      ["0.1.2.3", "unspecified"],
      ["10.0.0.1", "private"],
      ["10.255.255.255", "private"],
      ["100.64.0.1", "shared"],
      ["100.127.255.255", "shared"],
      ["100.100.100.200", "metadata"],
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["169.254.0.1", "link-local"],
      ["169.254.169.254", "metadata"],
      ["169.254.170.2", "metadata"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["192.0.0.8", "reserved"],
      ["192.0.2.1", "reserved"],
      ["192.168.1.1", "private"],
      ["198.18.0.1", "reserved"],
      ["198.51.100.7", "reserved"],
      ["203.0.113.9", "reserved"],
      ["224.0.0.251", "multicast"],
      ["239.255.255.250", "multicast"],
      ["240.0.0.1", "reserved"],
      ["255.255.255.255", "reserved"],
      ["168.63.129.16", "metadata"],
      ["::", "unspecified"],
      ["::1", "loopback"],
      ["[::1]", "loopback"],
      ["::ffff:10.0.0.1", "private"],
      ["::ffff:a00:1", "private"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:169.254.169.254", "metadata"],
      ["::ffff:0.0.0.0", "unspecified"],
      ["64:ff9b::a00:1", "private"],
      ["64:ff9b::7f00:1", "loopback"],
      ["64:ff9b:1::1", "private"],
      ["::127.0.0.1", "reserved"],
      ["100::1", "reserved"],
      ["2001:db8::1", "reserved"],
      ["2001::1", "reserved"],
      ["2002:a00:1::1", "reserved"],
      ["3fff::1", "reserved"],
      ["fc00::1", "private"],
      ["fd12:3456::1", "private"],
      ["fd00:ec2::254", "metadata"],
      ["fe80::1", "link-local"],
      ["fe80::1%eth0", "link-local"],
      ["febf::1", "link-local"],
      ["fec0::1", "private"],
      ["ff02::1", "multicast"],
      ["4000::1", "reserved"],
      ["not-an-address", "reserved"],
      ["", "reserved"],
      // public
      ["8.8.8.8", undefined],
      ["1.1.1.1", undefined],
      ["93.184.215.14", undefined],
      ["100.63.255.255", undefined],
      ["100.128.0.0", undefined],
      ["172.15.255.255", undefined],
      ["172.32.0.0", undefined],
      ["192.169.0.1", undefined],
      ["::ffff:8.8.8.8", undefined],
      ["64:ff9b::808:808", undefined],
      ["2606:4700:4700::1111", undefined],
      ["2a00:1450:4001:81b::200e", undefined]
    ]
    for (const [address, category] of table) expect(classify(address), address).toBe(category)
  })

  it("judges an IPv4-mapped or NAT64 address by the IPv4 address it embeds", () => {
    const octet = fc.integer({ min: 0, max: 255 })
    fc.assert(
      fc.property(octet, octet, octet, octet, (a, b, c, d) => {
        const v4 = `${a}.${b}.${c}.${d}`
        const hex = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
        const expected = classify(v4)
        expect(classify(`::ffff:${v4}`)).toBe(expected)
        expect(classify(`::ffff:${hex}`)).toBe(expected)
        expect(classify(`0:0:0:0:0:ffff:${hex}`)).toBe(expected)
        expect(classify(`64:ff9b::${hex}`)).toBe(expected)
      }),
      { numRuns: runs(300) }
    )
  })

  it("refuses every address of the private blocks", () => {
    const octet = fc.integer({ min: 0, max: 255 })
    fc.assert(
      fc.property(octet, octet, octet, (b, c, d) => {
        expect(classify(`10.${b}.${c}.${d}`)).toBe("private")
        expect(classify(`172.${16 + (b % 16)}.${c}.${d}`)).toBe("private")
        expect(classify(`192.168.${c}.${d}`)).toBe("private")
        expect(classify(`127.${b}.${c}.${d}`)).toBe("loopback")
        expect(classify(`100.${64 + (b % 64)}.${c}.${d}`)).toMatch(/^(shared|metadata)$/)
      }),
      { numRuns: runs(200) }
    )
  })
})

describe("AddressGuard.vetAddress", () => {
  it("applies the loopback rule", () => {
    expect(vetAddress("127.0.0.1", "refuse")).toBe("refused: resolves to a loopback address")
    expect(vetAddress("127.0.0.1", "allow")).toBeUndefined()
    expect(vetAddress("::1", "require")).toBeUndefined()
    expect(vetAddress("8.8.8.8", "refuse")).toBeUndefined()
    expect(vetAddress("8.8.8.8", "allow")).toBeUndefined()
    expect(vetAddress("8.8.8.8", "require")).toBe("refused: plain http is allowed only to loopback")
    for (const rule of ["refuse", "allow", "require"] as const) {
      expect(vetAddress("10.0.0.1", rule)).toBe("refused: resolves to a private address")
      expect(vetAddress("169.254.169.254", rule)).toBe("refused: resolves to a cloud metadata address")
    }
  })
})

describe("AddressGuard.checkUrl", () => {
  const live = { mode: "live", allowLoopbackHttp: false } as const
  const test = { mode: "test", allowLoopbackHttp: false } as const
  const sandbox = { mode: "live", allowLoopbackHttp: true } as const

  it("requires https unless the sandbox allows http to loopback", () => {
    expect(checkUrl("http://hooks.example/", live)).toEqual({
      ok: false,
      refusal: "refused: live deliveries must use https"
    })
    expect(checkUrl("http://hooks.example/", test)).toEqual({
      ok: false,
      refusal: "refused: test deliveries must use https"
    })
    expect(checkUrl("https://hooks.example/", live)).toMatchObject({ ok: true, loopback: "refuse" })
    expect(checkUrl("https://hooks.example/", sandbox)).toMatchObject({ ok: true, loopback: "allow" })
    expect(checkUrl("http://hooks.example/", sandbox)).toMatchObject({ ok: true, loopback: "require" })
    expect(checkUrl("http://127.0.0.1:9/", sandbox)).toMatchObject({ ok: true, loopback: "require" })
    expect(checkUrl("http://[::1]:9/", sandbox)).toMatchObject({ ok: true })
    expect(checkUrl("http://8.8.8.8/", sandbox)).toEqual({
      ok: false,
      refusal: "refused: plain http is allowed only to loopback"
    })
  })

  it("vets IP literals at once, however they are spelled", () => {
    for (const url of [
      "https://127.0.0.1/",
      "https://127.1/",
      "https://0x7f000001/",
      "https://2130706433/",
      "https://[::1]/",
      "https://[0:0:0:0:0:0:0:1]/",
      "https://[::ffff:127.0.0.1]/"
    ]) {
      expect(checkUrl(url, live), url).toEqual({ ok: false, refusal: "refused: resolves to a loopback address" })
    }
    expect(checkUrl("https://[::ffff:169.254.169.254]/", sandbox)).toEqual({
      ok: false,
      refusal: "refused: resolves to a cloud metadata address"
    })
    expect(checkUrl("https://8.8.8.8/", live)).toMatchObject({ ok: true })
  })

  it("knows localhost and private-use names without DNS, whatever their case or trailing dot", () => {
    for (const url of ["https://localhost/x", "https://LOCALHOST./x", "https://api.localhost:8443/x"]) {
      expect(checkUrl(url, live), url).toEqual({ ok: false, refusal: "refused: resolves to a loopback address" })
      expect(checkUrl(url, sandbox), url).toMatchObject({ ok: true, loopback: "allow" })
    }
    expect(checkUrl("http://localhost:4000/x", sandbox)).toMatchObject({ ok: true, loopback: "require" })
    for (const url of ["https://printer.local/x", "https://router.home.arpa/", "https://billing.corp.internal./x"]) {
      for (const rules of [live, sandbox]) {
        expect(checkUrl(url, rules), url).toEqual({ ok: false, refusal: "refused: names a host of a private network" })
      }
    }
    // only whole labels count
    for (const url of ["https://notlocalhost.example/", "https://local.example/", "https://internal.example/"]) {
      expect(checkUrl(url, live), url).toMatchObject({ ok: true })
    }
  })

  it("refuses what is not an http(s) URL", () => {
    expect(checkUrl("hooks.example/x", live)).toEqual({ ok: false, refusal: "refused: invalid URL" })
    expect(checkUrl("file:///etc/passwd", sandbox)).toEqual({ ok: false, refusal: "refused: unsupported URL scheme" })
    expect(checkUrl("gopher://hooks.example/", sandbox)).toEqual({
      ok: false,
      refusal: "refused: unsupported URL scheme"
    })
  })
})

describe("AddressGuard.pinnedLookup", () => {
  type Answer = { readonly error: NodeJS.ErrnoException | null; readonly address: unknown; readonly family?: number }
  const run = (
    addresses: ReadonlyArray<AddressGuard.ResolvedAddress>,
    options: Parameters<ReturnType<typeof pinnedLookup>>[1],
    rule: AddressGuard.LoopbackRule = "refuse"
  ) =>
    new Promise<Answer>((resolve) =>
      pinnedLookup(async () => addresses, rule)("host.example", options, (error, address, family) =>
        resolve(family === undefined ? { error, address } : { error, address, family })
      )
    )
  const a4 = { address: "93.184.215.14", family: 4 } as const
  const a6 = { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 } as const

  it("hands Node the vetted addresses, in the form it asked for", async () => {
    expect(await run([a4, a6], {})).toEqual({ error: null, address: a4.address, family: 4 })
    expect(await run([a4, a6], { all: true })).toEqual({ error: null, address: [a4, a6] satisfies LookupAddress[] })
    expect(await run([a4, a6], { family: 6 })).toEqual({ error: null, address: a6.address, family: 6 })
    expect(await run([a4, a6], { all: true, family: 4 })).toEqual({ error: null, address: [a4] })
  })

  it("refuses the whole host when one address is refused, and reports no address as not found", async () => {
    const refused = await run([a4, { address: "10.0.0.1", family: 4 }], { all: true })
    expect(refused.error).toBeInstanceOf(AddressGuard.AddressRefused)
    expect(refused.error?.message).toBe("refused: resolves to a private address")
    expect((await run([], {})).error?.code).toBe("ENOTFOUND")
    expect((await run([a6], { family: 4 })).error?.code).toBe("ENOTFOUND")
  })

  it("reports a resolver that throws instead of rejecting", async () => {
    const throwing: AddressGuard.Lookup = () => {
      throw Object.assign(new Error("boom"), { code: "EAI_AGAIN" })
    }
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      pinnedLookup(throwing, "refuse")("host.example", {}, (e) => resolve(e))
    )
    expect(error?.code).toBe("EAI_AGAIN")
  })
})
