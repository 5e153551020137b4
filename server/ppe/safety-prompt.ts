/**
 * The prompt of the safety analysis the chat LLM writes on a PPE violation: the findings of the check in words
 * (persons with what they wear and what they miss, the counts, the expected items), never the image. The LLM
 * knows only what the rule found, so it is told not to guess beyond it. Deterministic: same findings, same text.
 */
import type { ChatMessage } from '../../shared/chat/prompt.js';
import type { PpeVerdict } from '../../shared/ppe/rule.js';

export const SAFETY_SYSTEM_PROMPT =
  "You are a site safety officer reviewing the findings of Lookout's PPE (personal protective equipment) check of " +
  'one camera frame. The findings are all you know: do not guess about anything they do not state. Write a short ' +
  'analysis (at most 4 sentences): who is at risk and why, and the corrective action to take now.';

/** Persons listed one per line up to this many; the rest are counted (the prompt stays small). */
export const MAX_LISTED_PERSONS = 20;

const list = (items: readonly string[]) => (items.length ? items.join(', ') : 'none');

export function buildSafetyFindings(verdict: Pick<PpeVerdict, 'ppe_status' | 'person_count' | 'expected_ppe' | 'persons'>): string {
  const violating = verdict.persons.filter((p) => p.status === 'violation').length;
  const lines = [
    `PPE check result: ${verdict.ppe_status}.`,
    `Expected equipment for every person: ${list(verdict.expected_ppe)}.`,
    `Persons found: ${verdict.person_count}; compliant: ${verdict.person_count - violating}; in violation: ${violating}.`,
  ];
  verdict.persons.slice(0, MAX_LISTED_PERSONS).forEach((p, i) => {
    lines.push(
      `- Person ${i + 1} (box x=${p.x}, y=${p.y}, ${p.w}x${p.h} px): ${p.status}; wearing: ${list(p.present)}; missing: ${list(p.missing)}.`,
    );
  });
  if (verdict.persons.length > MAX_LISTED_PERSONS) lines.push(`- and ${verdict.persons.length - MAX_LISTED_PERSONS} more persons`);
  return lines.join('\n');
}

export function buildSafetyMessages(verdict: Pick<PpeVerdict, 'ppe_status' | 'person_count' | 'expected_ppe' | 'persons'>): ChatMessage[] {
  return [
    { role: 'system', content: SAFETY_SYSTEM_PROMPT },
    { role: 'user', content: `${buildSafetyFindings(verdict)}\n\nGive the safety analysis.` },
  ];
}
