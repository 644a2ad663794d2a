interface Greeting {
  name: string;
}

export function greet(g: Greeting): string {
  const text: string = `Hello, ${g.name}!`;
  return text;
}
