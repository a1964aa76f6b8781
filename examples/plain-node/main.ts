/**
 * A plain Node backend using the engine through its Promise facade:
 * create a business, quote a conversion, receive the stablecoins, read the balance.
 *
 *   npm start -w @xaalis/example-plain-node
 */
import { Decimal, DomainError } from "@xaalis/core"
import { createEngine } from "@xaalis/engine"

const engine = createEngine({ sandbox: { rate: Decimal.parse("70") as Decimal.Decimal } })
try {
  const business = await engine.createBusiness({ name: "Kairaba Coffee" })
  const caller = await engine.authenticate(business.secret_key_live)

  const conversion = await engine.createConversion(caller, { gmd_amount: 5000 })
  console.log(
    `send ${conversion.pay_amount} ${conversion.pay_currency} on ${conversion.network} to ${conversion.pay_address}`
  )

  const half = conversion.pay_amount / 2 // a JSON number, as a client would send it
  for (const tx_hash of ["0x01", "0x02"]) {
    const r = await engine.sandboxTransfer({
      network: "TRC20",
      currency: "USDT",
      to_address: conversion.pay_address,
      amount: half,
      tx_hash
    })
    const now = await engine.getConversion(caller, conversion.id)
    console.log(`${tx_hash}: applied=${r.applied}, status=${now.status}, actually_paid=${now.actually_paid}`)
  }
  console.log(`balance: ${(await engine.getBalance(caller)).available} GMD`)

  await engine.createConversion(caller, { gmd_amount: 100 }).catch((e: unknown) => {
    if (e instanceof DomainError) console.log(`refused as expected: ${e.code} (${e.status}): ${e.message}`)
    else throw e
  })
} finally {
  await engine.dispose()
}
