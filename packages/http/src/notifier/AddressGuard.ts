import { promises as dns, type LookupOptions } from "node:dns"
import { BlockList, isIP, isIPv4, isIPv6, type LookupFunction } from "node:net"

/**
 * The SSRF guard of the webhook notifier (decisions §8): which addresses a
 * delivery may connect to. A receiver URL is attacker-controlled (anyone with a
 * key sets a `callback_url`), so without this guard the service could be made to
 * POST to its own network: cloud metadata endpoints, databases, admin ports.
 *
 * Refused categories, IPv4 and IPv6 (IPv4-mapped and NAT64 addresses are judged
 * by the IPv4 address they embed):
 */
export type AddressCategory =
  | "metadata"
  | "unspecified"
  | "loopback"
  | "private"
  | "shared"
  | "link-local"
  | "multicast"
  | "reserved"

const describe: { readonly [C in AddressCategory]: string } = {
  metadata: "a cloud metadata address",
  unspecified: "an unspecified address",
  loopback: "a loopback address",
  private: "a private address",
  shared: "a shared (CGNAT) address",
  "link-local": "a link-local address",
  multicast: "a multicast address",
  reserved: "a reserved address"
}

type Subnet = readonly [network: string, prefix: number]

/** Checked in this order; the first match names the category. */
const ranges: ReadonlyArray<readonly [AddressCategory, ReadonlyArray<Subnet>, ReadonlyArray<Subnet>]> = [
  [
    "metadata",
    [
      ["169.254.169.254", 32], // AWS, GCP, Azure, OCI, DigitalOcean…
      ["169.254.170.2", 32], // AWS ECS task metadata
      ["169.254.170.23", 32], // AWS EKS pod identity
      ["100.100.100.200", 32], // Alibaba Cloud
      ["168.63.129.16", 32] // Azure wire server (a public address, reachable only from inside Azure)
    ],
    [
      ["fd00:ec2::254", 128], // AWS IMDS over IPv6
      ["fd00:ec2::23", 128] // AWS EKS pod identity over IPv6
    ]
  ],
  ["unspecified", [["0.0.0.0", 8]], [["::", 128]]],
  ["loopback", [["127.0.0.0", 8]], [["::1", 128]]],
  [
    "private",
    [
      ["10.0.0.0", 8],
      ["172.16.0.0", 12],
      ["192.168.0.0", 16]
    ],
    [
      ["fc00::", 7], // unique local
      ["fec0::", 10], // deprecated site-local
      ["64:ff9b:1::", 48] // local-use NAT64
    ]
  ],
  ["shared", [["100.64.0.0", 10]], []],
  ["link-local", [["169.254.0.0", 16]], [["fe80::", 10]]],
  ["multicast", [["224.0.0.0", 4]], [["ff00::", 8]]],
  [
    "reserved",
    [
      ["192.0.0.0", 24], // IETF protocol assignments
      ["192.0.2.0", 24], // documentation
      ["192.88.99.0", 24], // 6to4 relay anycast
      ["198.18.0.0", 15], // benchmarking
      ["198.51.100.0", 24], // documentation
      ["203.0.113.0", 24], // documentation
      ["240.0.0.0", 4] // reserved, and the broadcast address
    ],
    [
      ["::", 96], // IPv4-compatible (deprecated)
      ["100::", 64], // discard-only
      ["2001::", 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID…)
      ["2001:db8::", 32], // documentation
      ["2002::", 16], // 6to4: tunnels to an embedded IPv4 address
      ["3fff::", 20], // documentation
      ["5f00::", 16] // SRv6 SIDs
    ]
  ]
]

const lists: ReadonlyArray<readonly [AddressCategory, BlockList]> = ranges.map(([category, v4, v6]) => {
  const list = new BlockList()
  for (const [network, prefix] of v4) list.addSubnet(network, prefix, "ipv4")
  for (const [network, prefix] of v6) list.addSubnet(network, prefix, "ipv6")
  return [category, list] as const
})

/** IPv6 global unicast (2000::/3): any other IPv6 address is not routable on the internet. */
const globalUnicast = new BlockList()
globalUnicast.addSubnet("2000::", 3, "ipv6")

/** The 16 bytes of a valid IPv6 address (zone id ignored). */
const ipv6Bytes = (address: string): Uint8Array => {
  let text = address
  const lastColon = text.lastIndexOf(":")
  const tail = text.slice(lastColon + 1)
  if (tail.includes(".")) {
    const [a, b, c, d] = tail.split(".").map(Number) as [number, number, number, number]
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [left = "", right] = text.split("::")
  const head = left === "" ? [] : left.split(":")
  const rest = right === undefined || right === "" ? [] : right.split(":")
  const groups = [...head, ...Array<string>(8 - head.length - rest.length).fill("0"), ...rest]
  const bytes = new Uint8Array(16)
  groups.forEach((group, i) => {
    const value = Number.parseInt(group, 16)
    bytes[2 * i] = value >> 8
    bytes[2 * i + 1] = value & 0xff
  })
  return bytes
}

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>): boolean => prefix.every((b, i) => bytes[i] === b)
const mapped_prefix = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]
const nat64_prefix = [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0]

/** The IPv4 address an IPv4-mapped (`::ffff:a.b.c.d`) or NAT64 (`64:ff9b::a.b.c.d`) address stands for. */
const embeddedIPv4 = (address: string): string | undefined => {
  const bytes = ipv6Bytes(address)
  if (!startsWith(bytes, mapped_prefix) && !startsWith(bytes, nat64_prefix)) return undefined
  return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`
}

/**
 * The category of an IP address the notifier must not connect to, or undefined
 * for a public address. Anything that is not an IP address is `reserved`.
 */
export const classify = (address: string): AddressCategory | undefined => {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address
  const ip = bare.includes("%") ? bare.slice(0, bare.indexOf("%")) : bare
  if (isIPv4(ip)) {
    for (const [category, list] of lists) if (list.check(ip, "ipv4")) return category
    return undefined
  }
  if (!isIPv6(ip)) return "reserved"
  const v4 = embeddedIPv4(ip)
  if (v4 !== undefined) return classify(v4)
  for (const [category, list] of lists) if (list.check(ip, "ipv6")) return category
  return globalUnicast.check(ip, "ipv6") ? undefined : "reserved"
}

/**
 * How loopback is treated for one request: refused (live rules), allowed (https
 * under `allowLoopbackHttp`), or required (plain http under `allowLoopbackHttp`).
 */
export type LoopbackRule = "refuse" | "allow" | "require"

/** The refusal message for connecting to `address`, or undefined when allowed. */
export const vetAddress = (address: string, loopback: LoopbackRule): string | undefined => {
  const category = classify(address)
  if (category === "loopback" && loopback !== "refuse") return undefined
  if (category !== undefined) return `refused: resolves to ${describe[category]}`
  if (loopback === "require") return "refused: plain http is allowed only to loopback"
  return undefined
}

export interface GuardRules {
  /** The outbox row's mode. Test mode follows the live rules: see `allowLoopbackHttp` for the one relaxation. */
  readonly mode: "test" | "live"
  /** The sandbox's relaxation (decisions §8): plain http and https to loopback, in every mode. */
  readonly allowLoopbackHttp: boolean
}

export type UrlVerdict =
  | { readonly ok: true; readonly url: URL; readonly loopback: LoopbackRule }
  | { readonly ok: false; readonly refusal: string }

/**
 * Host names whose answer is known without asking DNS: `localhost` and
 * `*.localhost` always mean loopback (RFC 6761 §6.3), and the private-use
 * names `*.local` (RFC 6762), `home.arpa` (RFC 8375) and `*.internal` (ICANN,
 * 2024) only ever name hosts of a private network. A trailing dot changes nothing.
 */
export const specialUseName = (host: string): "loopback" | "private" | undefined => {
  const name = host.toLowerCase().replace(/\.$/, "")
  if (name === "localhost" || name.endsWith(".localhost")) return "loopback"
  const privateUse = ["local", "home.arpa", "internal"]
  return privateUse.some((suffix) => name === suffix || name.endsWith(`.${suffix}`)) ? "private" : undefined
}

/**
 * The part of the guard that needs no DNS: scheme, the address when the host
 * is an IP literal (Node connects to IP literals without a lookup, so they are
 * vetted here), and the special-use names (`specialUseName`). Other host names
 * are vetted when they are resolved (`pinnedLookup`).
 */
export const checkUrl = (raw: string, rules: GuardRules): UrlVerdict => {
  if (!URL.canParse(raw)) return { ok: false, refusal: "refused: invalid URL" }
  const url = new URL(raw)
  let loopback: LoopbackRule
  if (url.protocol === "https:") loopback = rules.allowLoopbackHttp ? "allow" : "refuse"
  else if (url.protocol === "http:") {
    if (!rules.allowLoopbackHttp) return { ok: false, refusal: `refused: ${rules.mode} deliveries must use https` }
    loopback = "require"
  } else return { ok: false, refusal: "refused: unsupported URL scheme" }
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
  if (host === "") return { ok: false, refusal: "refused: invalid URL" }
  if (isIP(host) !== 0) {
    const refusal = vetAddress(host, loopback)
    if (refusal !== undefined) return { ok: false, refusal }
  } else {
    const special = specialUseName(host)
    const refusal =
      special === "loopback"
        ? vetAddress("127.0.0.1", loopback)
        : special === "private"
          ? "refused: names a host of a private network"
          : undefined
    if (refusal !== undefined) return { ok: false, refusal }
  }
  return { ok: true, url, loopback }
}

/** One resolved address of a host name. */
export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** Resolves a host name to all its addresses (the system resolver by default; injectable for tests). */
export type Lookup = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

/** The system resolver (`getaddrinfo`, as Node's own connections use). */
export const systemLookup: Lookup = async (hostname) =>
  (await dns.lookup(hostname, { all: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))

/** A lookup failure or refusal handed to Node's connection machinery. */
export class AddressRefused extends Error {
  override readonly name = "AddressRefused"
}

const notFound = (): NodeJS.ErrnoException => Object.assign(new Error("no address"), { code: "ENOTFOUND" })

const wantedFamily = (family: LookupOptions["family"]): 4 | 6 | undefined =>
  family === 4 || family === "IPv4" ? 4 : family === 6 || family === "IPv6" ? 6 : undefined

/**
 * A `lookup` for `http.request`/`https.request` that resolves the host, vets
 * every address, and hands Node only vetted addresses: the connection goes to
 * the address that was checked (no second resolution a DNS rebinding could
 * change). A host with any refused address is refused as a whole. TLS still
 * verifies the certificate against the host name.
 */
export const pinnedLookup =
  (lookup: Lookup, loopback: LoopbackRule): LookupFunction =>
  (hostname, options, callback) => {
    // Through a promise, so a resolver that throws synchronously is reported like one that rejects.
    Promise.resolve(hostname)
      .then(lookup)
      .then(
        (addresses) => {
          for (const a of addresses) {
            const refusal = vetAddress(a.address, loopback)
            if (refusal !== undefined) return callback(new AddressRefused(refusal), "")
          }
          const family = wantedFamily(options.family)
          const usable = family === undefined ? addresses : addresses.filter((a) => a.family === family)
          const first = usable[0]
          if (first === undefined) return callback(notFound(), "")
          if (options.all === true)
            return callback(
              null,
              usable.map((a) => ({ address: a.address, family: a.family }))
            )
          return callback(null, first.address, first.family)
        },
        (error: unknown) => callback(error instanceof Error ? (error as NodeJS.ErrnoException) : notFound(), "")
      )
  }
