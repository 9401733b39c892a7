// The display name: asked once in a dialog, kept in localStorage, changeable.

const STORAGE_KEY = 'happy.name';

export function storedName() {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

function storeName(name) {
  try {
    localStorage.setItem(STORAGE_KEY, name);
  } catch {
    // Without storage the name lasts for this page only.
  }
}

/** Why `name` is not a valid display name (PROTOCOL.md section 2), or '' when it is. */
export function nameProblem(name) {
  const characters = [...name];
  if (characters.length === 0) return 'Please enter a name.';
  if (characters.length > 32) return 'At most 32 characters, please.';
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return 'Only printable characters, please.';
  return '';
}

/**
 * Opens the dialog and resolves with the chosen name. While no name is
 * stored yet the dialog cannot be dismissed, since joining needs one.
 */
export function askName(current) {
  const dialog = document.getElementById('name-dialog');
  const form = document.getElementById('name-form');
  const input = document.getElementById('name-input');
  const problem = document.getElementById('name-problem');
  const cancel = document.getElementById('name-cancel');
  const required = !current;
  cancel.hidden = required;
  input.value = current || '';
  problem.textContent = '';

  return new Promise((resolve) => {
    const finish = (name) => {
      form.removeEventListener('submit', submit);
      dialog.removeEventListener('cancel', onCancel);
      cancel.removeEventListener('click', onCancelClick);
      dialog.close();
      resolve(name);
    };
    const submit = (event) => {
      event.preventDefault();
      const name = input.value.trim();
      const why = nameProblem(name);
      if (why) {
        problem.textContent = why;
        input.setAttribute('aria-invalid', 'true');
        input.focus();
        return;
      }
      input.removeAttribute('aria-invalid');
      storeName(name);
      finish(name);
    };
    const onCancel = (event) => {
      if (required) event.preventDefault();
      else finish(null);
    };
    const onCancelClick = () => finish(null);
    form.addEventListener('submit', submit);
    dialog.addEventListener('cancel', onCancel);
    cancel.addEventListener('click', onCancelClick);
    dialog.showModal();
    input.focus();
    input.select();
  });
}
