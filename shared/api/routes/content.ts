/** The route tables' shorthands (routes.ts and routes/*.ts): JSON content, a 200 answer, a JSON body. */
import { z } from 'zod';

export const json = <S extends z.ZodType>(schema: S, example?: unknown) => ({
  'application/json': { schema, ...(example === undefined ? {} : { example }) },
});
export const ok = <S extends z.ZodType>(schema: S, description: string) => ({ 200: { description, content: json(schema) } });
export const jsonBody = <S extends z.ZodType>(schema: S, example?: unknown) => ({
  required: true as const,
  content: json(schema, example),
});

/** A page or file of the API reference (`text/html`, CSS, JavaScript, PNG). */
export const docsFile = z.string().meta({ description: 'The file.' });
