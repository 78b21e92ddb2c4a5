// A frontend's use of a client generated from the project's lexicons with
// `lex build` (@atproto/lex): typed parameters, typed answers, typed errors.
// Compiled (not run) by check_generated_client.mjs against the generated code.
import { xrpc, xrpcSafe } from '@atproto/lex'
import * as app from './lexicons/app.js'
import * as com from './lexicons/com.js'

export async function showOutline(service: string, handle: `${string}.${string}`): Promise<string[]> {
  const resolved = await xrpc(service, com.atproto.identity.resolveHandle, { params: { handle } })
  const repo = resolved.body.did
  const texts: string[] = []
  let cursor: string | undefined
  do {
    const page = await xrpc(service, app.bulleted.getChildren, { params: { repo, limit: 100, cursor } })
    for (const node of page.body.nodes) {
      // `parent` is absent at the top level: a string or undefined, never null.
      const parent: string | undefined = node.parent
      texts.push(`${parent ?? '(top)'}: ${node.text}${node.completed ? ' (done)' : ''}`)
    }
    cursor = page.body.cursor
  } while (cursor)
  return texts
}

// The published getOutline: flat rows in pre-order, whether anything was
// left out and which bound did it.
export async function outlineTexts(service: string, did: `did:${string}:${string}`): Promise<string[]> {
  const answer = await xrpc(service, app.bulleted.getOutline, { params: { did, depth: 5, limit: 100 } })
  const rows: string[] = answer.body.nodes.map((row) => `${row.text}${row.note ? ` (${row.note})` : ''}`)
  const stop: string | undefined = answer.body.stop
  if (answer.body.truncated) rows.push(`... (${stop ?? 'truncated'})`)
  return rows
}

export async function addAfter(service: string, token: string, repo: `did:${string}:${string}`, afterRkey: string) {
  const headers = { authorization: `Bearer ${token}` }
  const input = { repo, afterRkey, text: 'next' }
  const first = await xrpcSafe(service, app.bulleted.createNode, { body: input, headers })
  if (first.success) return first.body.rkey
  // 409 StaleNeighbours: refetch the group and apply the same intent once more.
  if (first.error === 'StaleNeighbours') {
    const again = await xrpc(service, app.bulleted.createNode, { body: input, headers })
    return again.body.rkey
  }
  throw new Error(`${first.error}: ${first.message}`)
}
