@echo off
rem Drag a .pmx file onto this file: plush makes one of its materials soft and bakes the result
rem into a folder named after the model, beside it.
chcp 65001 >nul
setlocal
if "%~1"=="" (
  echo Drag a .pmx model onto plush-drop.bat.
  pause
  exit /b 2
)
"%~dp0plush.exe" info "%~1"
echo.
set /p CAGE=Material to make soft (name or number from the list above): 
set /p MOTION=Motion .vmd (drag it here, or press Enter for none): 
set "OUT=%~dpn1_plush"
if "%MOTION%"=="" (
  "%~dp0plush.exe" run "%~1" --cage "%CAGE%" -o "%OUT%"
) else (
  "%~dp0plush.exe" run "%~1" --cage "%CAGE%" --motion %MOTION% -o "%OUT%"
)
echo.
if errorlevel 1 (echo plush stopped: see the message above.) else (echo Done: open the files in "%OUT%".)
pause
